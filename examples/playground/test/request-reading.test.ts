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

describe('readRequest: amounts as typed, so that the gate can refuse them', () => {
  it.each([
    ['send -20 dollars to alice@example.com', -2000],
    ['send $-20 to alice@example.com', -2000],
    ['send -$20 to alice@example.com', -2000],
    ['send minus 20 dollars to alice@example.com', -2000],
    ['send $20.505 to alice@example.com', 2050.5],
    ['send 0.001 dollars to alice@example.com', 0.1],
    ['send $20.10 to alice@example.com', 2010],
    ['send $0 to alice@example.com', 0],
    ['send $1,000,000,000 to alice@example.com', 100_000_000_000],
    ['send a million dollars to alice@example.com', 100_000_000],
    ['send 2.5 cents to alice@example.com', 2.5],
  ])('%s → %d cents', (text, cents) => {
    expect(readRequest(text).amountCents).toBe(cents);
  });

  it.each([
    ['send 20 euros to alice@example.com', 2000, 'EUR'],
    ['send €20 to alice@example.com', 2000, 'EUR'],
    ['send £5 to alice@example.com', 500, 'GBP'],
    ['send 3 bitcoin to alice@example.com', 300, 'BTC'],
    ['send 1000 yen to alice@example.com', 100_000, 'JPY'],
    ['send 20 dollars to alice@example.com', 2000, undefined],
  ])('%s → %d in %s', (text, cents, currency) => {
    expect(readRequest(text)).toMatchObject({ amountCents: cents, currency });
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
    [
      'Add two pairs of socks, a cap and three trail maps',
      [
        { sku: 'socks', quantity: 2 },
        { sku: 'cap', quantity: 1 },
        { sku: 'map', quantity: 3 },
      ],
    ],
    [
      'add ten embroidered patches and 2x steel bottle',
      [
        { sku: 'patch', quantity: 10 },
        { sku: 'bottle', quantity: 2 },
      ],
    ],
    ['put twelve t-shirts in my cart', [{ sku: 'tee', quantity: 12 }]],
    ['add an enamel camp mug', [{ sku: 'mug', quantity: 1 }]],
    ['add -3 mugs', [{ sku: 'mug', quantity: -3 }]],
    ['add minus three mugs', [{ sku: 'mug', quantity: -3 }]],
    ['add 2.5 mugs', [{ sku: 'mug', quantity: 2.5 }]],
    ['add half a mug', [{ sku: 'mug', quantity: 0.5 }]],
    ['add 0 mugs', [{ sku: 'mug', quantity: 0 }]],
    ['add 1000000 mugs', [{ sku: 'mug', quantity: 1_000_000 }]],
    ['add a dozen mugs', [{ sku: 'mug', quantity: 12 }]],
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
