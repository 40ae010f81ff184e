import { SKUS, type Sku } from '../shop/shop-store.ts';

/** The values a visitor's message names, as the scripted model reads them. */
export interface RequestValues {
  /** An amount of money, in cents: "$20", "20 dollars", "20.50", "2000 cents", "twenty dollars fifty". */
  readonly amountCents: number | undefined;
  /** The first email address. */
  readonly email: string | undefined;
  /** Each product named, with the quantity before it ("two mugs", "3 caps", "a beanie"), in order. */
  readonly items: readonly { readonly sku: Sku; readonly quantity: number }[];
  /** A five-digit US postcode. */
  readonly postcode: string | undefined;
  /** An order id such as `ord_1000`. */
  readonly orderId: string | undefined;
  /** A coupon code: a word in capitals with letters and digits, such as `TRAIL10`. */
  readonly coupon: string | undefined;
}

/** What each product is called in a sentence; the longest names are tried first. */
const PRODUCT_NAMES: Readonly<Record<Sku, readonly string[]>> = {
  mug: ['enamel camp mugs', 'enamel camp mug', 'camp mugs', 'camp mug', 'mugs', 'mug'],
  tee: ['trail tees', 'trail tee', 't-shirts', 't-shirt', 'tshirts', 'tshirt', 'shirts', 'shirt', 'tees', 'tee'],
  socks: ['wool hiking socks', 'hiking socks', 'pairs of socks', 'pair of socks', 'socks', 'sock'],
  cap: ['field caps', 'field cap', 'caps', 'cap'],
  bottle: ['steel bottles', 'steel bottle', 'water bottles', 'water bottle', 'bottles', 'bottle'],
  beanie: ['rib beanies', 'rib beanie', 'beanies', 'beanie'],
  map: ['trail maps', 'trail map', 'maps', 'map'],
  patch: ['embroidered patches', 'embroidered patch', 'patches', 'patch'],
};

const ONES: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const NUMBER_WORD = [...Object.keys(ONES), ...Object.keys(TENS), 'hundred', 'thousand', 'a', 'an', 'and'].join('|');
/** A number in words: "twenty five", "twenty-five", "a hundred", "one thousand two hundred". */
const WORDS = `(?:(?:${NUMBER_WORD})(?:[\\s-]+(?:${NUMBER_WORD}))*)`;
const DIGITS = '(?:\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.\\d+)?';
const NUMBER = `(?:${DIGITS}|${WORDS})`;
/** A number that is never just "a" or "and": what may follow "dollars" as its cents. */
const COUNT_WORD = [...Object.keys(ONES), ...Object.keys(TENS)].join('|');
const CENTS_NUMBER = `(?:${DIGITS}|(?:${COUNT_WORD})(?:[\\s-]+(?:${COUNT_WORD}))*)`;

/**
 * Reads the values a visitor typed, so that the scripted model can propose exactly those: "send 20
 * dollars to alice@example.com" gives 2000 cents and that address; "add two mugs and a cap" gives
 * two mugs and one cap. Anything not named is `undefined` (or no items): the model then asks.
 *
 * @example
 * readRequest('Send $20.50 to alice@example.com'); // { amountCents: 2050, email: 'alice@example.com', items: [], … }
 */
export function readRequest(text: string): RequestValues {
  const email = /[^\s@<>(),;:"']+@[^\s@<>(),;:"']+\.[a-z]{2,}/i.exec(text)?.[0]?.replace(/[.]+$/, '');
  // Addresses and ids hold digits that are no amount: read the rest without them.
  const plain = text
    .replace(/[^\s@]+@[^\s@]+/g, ' ')
    .replace(/\bord_\d+\b/gi, ' ')
    .toLowerCase();
  const postcode = /\b(\d{5})\b/.exec(plain)?.[1];
  return {
    amountCents: readAmount(postcode === undefined ? plain : plain.replace(postcode, ' ')),
    email,
    items: readItems(plain),
    postcode,
    orderId: /\bord_\d+\b/i.exec(text)?.[0]?.toLowerCase(),
    coupon: /\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{3,16}\b/.exec(text)?.[0],
  };
}

/** A number written in digits or words, or `undefined`. */
export function readNumber(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (new RegExp(`^${DIGITS}$`).test(trimmed)) return Number(trimmed.replaceAll(',', ''));
  const words = trimmed.split(/[\s-]+/).filter((word) => word !== 'and');
  if (words.length === 0) return undefined;
  let total = 0;
  let current = 0;
  for (const word of words) {
    if (word === 'a' || word === 'an') current += 1;
    else if (word in ONES) current += ONES[word] ?? 0;
    else if (word in TENS) current += TENS[word] ?? 0;
    else if (word === 'hundred') current = (current || 1) * 100;
    else if (word === 'thousand') {
      total += (current || 1) * 1000;
      current = 0;
    } else return undefined;
  }
  return total + current;
}

function readAmount(text: string): number | undefined {
  const cents = (dollars: number, extra = 0) => Math.round(dollars * 100) + extra;
  // "$20", "$20.50", "$ 1,250"
  const sign = new RegExp(`\\$\\s*(${DIGITS})`).exec(text);
  if (sign?.[1] !== undefined) return cents(Number(sign[1].replaceAll(',', '')));
  // "twelve dollars fifty", "20 dollars and 50 cents", "20 bucks", "20 usd"
  const dollars = new RegExp(`\\b(${NUMBER})\\s*(?:dollars?|bucks?|usd)\\b(?:\\s*(?:and\\s+)?(${CENTS_NUMBER})(?:\\s*cents?)?)?`).exec(text);
  if (dollars?.[1] !== undefined) {
    const whole = readNumber(dollars[1]);
    const part = dollars[2] === undefined ? 0 : (readNumber(dollars[2]) ?? 0);
    if (whole !== undefined) return cents(whole, part < 100 ? part : 0);
  }
  // "2000 cents"
  const onlyCents = new RegExp(`\\b(${NUMBER})\\s*(?:cents?|¢)`).exec(text);
  if (onlyCents?.[1] !== undefined) {
    const value = readNumber(onlyCents[1]);
    if (value !== undefined && Number.isInteger(value)) return value;
  }
  // "20.50": two decimals are dollars and cents
  const decimal = /(?:^|[^\d.])(\d+\.\d{2})(?![\d.])/.exec(text);
  if (decimal?.[1] !== undefined) return cents(Number(decimal[1]));
  return undefined;
}

const NAMES = SKUS.flatMap((sku) => PRODUCT_NAMES[sku].map((name) => ({ sku, name }))).sort((a, b) => b.name.length - a.name.length);
const PRODUCT = new RegExp(`\\b(${NAMES.map(({ name }) => name.replace('-', '\\-')).join('|')})\\b`, 'g');
const QUANTITY = new RegExp(`(?:^|\\s)(${NUMBER})\\s*(?:x\\s*)?(?:(?:pairs?|packs?)\\s+of\\s+)?(?:more\\s+)?$`);

function readItems(text: string): { sku: Sku; quantity: number }[] {
  const items: { sku: Sku; quantity: number }[] = [];
  let from = 0;
  for (const match of text.matchAll(PRODUCT)) {
    const sku = NAMES.find(({ name }) => name === match[1])?.sku;
    if (sku === undefined) continue;
    // The quantity is just before the name, after the previous product: "two mugs and 3 caps".
    const before = text.slice(from, match.index);
    const said = QUANTITY.exec(before)?.[1];
    const quantity = said === undefined ? 1 : readNumber(said);
    items.push({ sku, quantity: quantity === undefined || !Number.isInteger(quantity) ? 1 : quantity });
    from = match.index + match[0].length;
  }
  return items;
}
