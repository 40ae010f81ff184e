import { describe, expect, it } from 'vitest';
import { readNumber, readRequest } from '../src/model/request-reading.ts';

describe('readRequest: amounts', () => {
  it.each([
    ['send 20 dollars to alice@example.com', 2000],
    ['Send $20 to alice@example.com', 2000],
    ['send $20.50 to bob@example.com', 2050],
    ['transfer 20.50 to bob@example.com', 2050],
    ['send 2000 cents to bob@example.com', 2000],
    ['send twenty dollars to bob@example.com', 2000],
    ['pay twelve dollars fifty', 1250],
    ['send 12 dollars and 50 cents to bob@example.com', 1250],
    ['send a hundred dollars to bob@example.com', 10_000],
    ['send $1,250 to bob@example.com', 125_000],
    ['send 7 bucks to bob@example.com', 700],
  ])('%s → %i cents', (text, cents) => {
    expect(readRequest(text).amountCents).toBe(cents);
  });

  it('finds no amount where none was typed, and takes no digits from an address, an order id or a postcode', () => {
    expect(readRequest('send money to alice2000@example.com').amountCents).toBeUndefined();
    expect(readRequest('where is ord_1000?').amountCents).toBeUndefined();
    expect(readRequest('earliest delivery to 94110').amountCents).toBeUndefined();
    expect(readRequest('send twenty dollars a month to bob@example.com').amountCents).toBe(2000);
  });
});

describe('readRequest: addresses, ids and codes', () => {
  it('reads the email address without the sentence around it', () => {
    expect(readRequest('send 20 dollars to alice@example.com.').email).toBe('alice@example.com');
    expect(readRequest('Pay (sam.lee@trail.co) $5').email).toBe('sam.lee@trail.co');
    expect(readRequest('send 20 dollars to alice').email).toBeUndefined();
  });

  it('reads a postcode, an order id and a coupon code', () => {
    expect(readRequest('When is the earliest delivery to 94110?').postcode).toBe('94110');
    expect(readRequest('Where is my order ORD_1002?').orderId).toBe('ord_1002');
    expect(readRequest('apply TRAIL10 please').coupon).toBe('TRAIL10');
    expect(readRequest('apply the coupon please').coupon).toBeUndefined();
  });
});

describe('readRequest: products and quantities', () => {
  it.each([
    ['add two mugs', [{ sku: 'mug', quantity: 2 }]],
    ['add 3 caps', [{ sku: 'cap', quantity: 3 }]],
    ['add a beanie', [{ sku: 'beanie', quantity: 1 }]],
    ['add mugs', [{ sku: 'mug', quantity: 1 }]],
    ['Add two pairs of socks, a cap and three trail maps', [{ sku: 'socks', quantity: 2 }, { sku: 'cap', quantity: 1 }, { sku: 'map', quantity: 3 }]],
    ['add ten embroidered patches and 2x steel bottle', [{ sku: 'patch', quantity: 10 }, { sku: 'bottle', quantity: 2 }]],
    ['put twelve t-shirts in my cart', [{ sku: 'tee', quantity: 12 }]],
    ['add an enamel camp mug', [{ sku: 'mug', quantity: 1 }]],
  ])('%s', (text, items) => {
    expect(readRequest(text).items).toEqual(items);
  });

  it('names nothing when no product of the catalog is named', () => {
    expect(readRequest('add a unicorn plush').items).toEqual([]);
  });
});

describe('readNumber', () => {
  it.each([
    ['2', 2],
    ['1,250', 1250],
    ['12.5', 12.5],
    ['two', 2],
    ['twenty-five', 25],
    ['twenty five', 25],
    ['a hundred', 100],
    ['one thousand two hundred and fifty', 1250],
  ])('%s → %d', (text, value) => {
    expect(readNumber(text)).toBe(value);
  });

  it('is undefined for words that are no number', () => {
    expect(readNumber('several')).toBeUndefined();
    expect(readNumber('')).toBeUndefined();
  });
});
