import { SKUS, type Sku } from '../shop/shop-store.ts';

/** The values a visitor's message names, as the scripted model reads them. */
export interface RequestValues {
  /**
   * An amount of money in hundredths of its unit, as typed: "$20", "20 dollars", "20.50", "2000
   * cents", "twenty dollars fifty"; negative ("-$20", "minus 20 dollars"), fractional ("$20.505" is
   * 2050.5) or huge as written, so that the gate, not the model, refuses what is out of bounds.
   */
  readonly amountCents: number | undefined;
  /** The ISO code of a unit other than dollars the amount was typed in ("20 euros", "€20"), or `undefined` for dollars. */
  readonly currency?: string | undefined;
  /** The first email address. */
  readonly email: string | undefined;
  /** Each product named, with the quantity before it ("two mugs", "3 caps", "a beanie"), in order, as typed ("-3", "2.5", "half a"). */
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
  tee: [
    'trail tees',
    'trail tee',
    't-shirts',
    't-shirt',
    'tshirts',
    'tshirt',
    'shirts',
    'shirt',
    'tees',
    'tee',
  ],
  socks: ['wool hiking socks', 'hiking socks', 'pairs of socks', 'pair of socks', 'socks', 'sock'],
  cap: ['field caps', 'field cap', 'caps', 'cap'],
  bottle: ['steel bottles', 'steel bottle', 'water bottles', 'water bottle', 'bottles', 'bottle'],
  beanie: ['rib beanies', 'rib beanie', 'beanies', 'beanie'],
  map: ['trail maps', 'trail map', 'maps', 'map'],
  patch: ['embroidered patches', 'embroidered patch', 'patches', 'patch'],
};

const ONES: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Readonly<Record<string, number>> = { thousand: 1e3, million: 1e6, billion: 1e9 };
const NUMBER_WORD = [
  ...Object.keys(ONES),
  ...Object.keys(TENS),
  ...Object.keys(SCALES),
  'hundred',
  'dozen',
  'half',
  'a',
  'an',
  'and',
].join('|');
/** A number in words: "twenty five", "twenty-five", "a hundred", "one thousand two hundred", "half a", "a dozen". */
const WORDS = `(?:(?:${NUMBER_WORD})(?:[\\s-]+(?:${NUMBER_WORD}))*)`;
const DIGITS = '(?:\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.\\d+)?';
/** A minus sign as typed: "-", "−" or the word "minus". */
const SIGN = '(?:[-\u2212]\\s*|minus\\s+)';
const NUMBER = `(?:${SIGN}?(?:${DIGITS}|${WORDS}))`;
/** A number that is never just "a" or "and": what may follow "dollars" as its cents. */
const COUNT_WORD = [...Object.keys(ONES), ...Object.keys(TENS)].join('|');
const CENTS_NUMBER = `(?:${DIGITS}|(?:${COUNT_WORD})(?:[\\s-]+(?:${COUNT_WORD}))*)`;

/** Each unit of money the model knows, with its ISO code: the symbols, then the words. */
const SYMBOLS: Readonly<Record<string, string | undefined>> = {
  $: undefined,
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
};
const UNITS: readonly (readonly [string, string | undefined])[] = [
  ['dollars?|bucks?|usd', undefined],
  ['euros?|eur', 'EUR'],
  ['pounds?(?: sterling)?|quid|gbp', 'GBP'],
  ['yen|jpy', 'JPY'],
  ['bitcoins?|btc', 'BTC'],
];

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
  const amount = readAmount(postcode === undefined ? plain : plain.replace(postcode, ' '));
  return {
    amountCents: amount?.cents,
    currency: amount?.currency,
    email,
    items: readItems(plain),
    postcode,
    orderId: /\bord_\d+\b/i.exec(text)?.[0]?.toLowerCase(),
    coupon: /\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{3,16}\b/.exec(text)?.[0],
  };
}

/** A number written in digits or words, signed or not, or `undefined`. */
export function readNumber(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  const sign = new RegExp(`^${SIGN}`).exec(trimmed);
  if (sign !== null) {
    const value = readNumber(trimmed.slice(sign[0].length));
    return value === undefined ? undefined : -value;
  }
  if (new RegExp(`^${DIGITS}$`).test(trimmed)) return Number(trimmed.replaceAll(',', ''));
  const words = trimmed.split(/[\s-]+/).filter((word) => word !== 'and' && word !== '');
  if (words.length === 0) return undefined;
  // "half a mug", "half a dozen", "two and a half"
  if (words[0] === 'half') {
    const rest = words.slice(1).filter((word) => word !== 'a' && word !== 'an');
    const whole = rest.length === 0 ? 1 : readWords(rest);
    return whole === undefined ? undefined : whole / 2;
  }
  if (words.at(-1) === 'half' && words.at(-2) === 'a') {
    const whole = readWords(words.slice(0, -2));
    return whole === undefined ? undefined : whole + 0.5;
  }
  return readWords(words);
}

function readWords(words: readonly string[]): number | undefined {
  if (words.length === 0) return undefined;
  let total = 0;
  let current = 0;
  for (const word of words) {
    if (word === 'a' || word === 'an') current += 1;
    else if (word in ONES) current += ONES[word] ?? 0;
    else if (word in TENS) current += TENS[word] ?? 0;
    else if (word === 'hundred') current = (current || 1) * 100;
    else if (word === 'dozen') current = (current || 1) * 12;
    else if (word in SCALES) {
      total += (current || 1) * (SCALES[word] ?? 1);
      current = 0;
    } else return undefined;
  }
  return total + current;
}

/**
 * Hundredths of a number as typed, exactly: the decimal point moves two places in the text, so
 * "20.10" is 2010 (not 2010.0000000000002) and "20.505" is 2050.5.
 */
function hundredths(said: string): number | undefined {
  const trimmed = said.trim().toLowerCase();
  const sign = new RegExp(`^${SIGN}`).exec(trimmed);
  const body = sign === null ? trimmed : trimmed.slice(sign[0].length);
  const negative = sign === null ? 1 : -1;
  if (!new RegExp(`^${DIGITS}$`).test(body)) {
    const value = readNumber(body);
    return value === undefined ? undefined : (negative * Math.round(value * 1e6)) / 1e4;
  }
  const [whole = '0', fraction = ''] = body.replaceAll(',', '').split('.');
  const padded = fraction.padEnd(2, '0');
  return negative * Number(`${whole}${padded.slice(0, 2)}.${padded.slice(2) || '0'}`);
}

function readAmount(text: string): { cents: number; currency: string | undefined } | undefined {
  // "$20", "$20.50", "$ 1,250", "-$20", "$-20", "€20"
  const symbol = new RegExp(`(${SIGN})?([$€£¥])\\s*(${SIGN})?(${DIGITS})`).exec(text);
  if (symbol?.[4] !== undefined) {
    const cents = hundredths(symbol[4]);
    const negative = (symbol[1] !== undefined) !== (symbol[3] !== undefined);
    if (cents !== undefined) return { cents: negative ? -cents : cents, currency: SYMBOLS[symbol[2] ?? '$'] };
  }
  // "twelve dollars fifty", "20 dollars and 50 cents", "20 bucks", "20 usd", "20 euros", "3 bitcoin"
  for (const [unit, currency] of UNITS) {
    const named = new RegExp(
      `(?:^|[^\\w.-])(${NUMBER})\\s*(?:${unit})\\b(?:\\s*(?:and\\s+)?(${CENTS_NUMBER})(?:\\s*cents?)?)?`,
    ).exec(text);
    if (named?.[1] === undefined) continue;
    const whole = hundredths(named[1]);
    const part = named[2] === undefined ? 0 : (readNumber(named[2]) ?? 0);
    if (whole !== undefined)
      return { cents: whole + (part < 100 ? Math.sign(whole || 1) * part : 0), currency };
  }
  // "2000 cents", "2.5 cents"
  const onlyCents = new RegExp(`(?:^|[^\\w.-])(${NUMBER})\\s*(?:cents?|¢)`).exec(text);
  if (onlyCents?.[1] !== undefined) {
    const value = readNumber(onlyCents[1]);
    if (value !== undefined) return { cents: value, currency: undefined };
  }
  // "20.50": two decimals are dollars and cents
  const decimal = new RegExp(`(?:^|[^\\d.])(${SIGN}?\\d+\\.\\d{2})(?![\\d.])`).exec(text);
  if (decimal?.[1] !== undefined) {
    const cents = hundredths(decimal[1]);
    if (cents !== undefined) return { cents, currency: undefined };
  }
  return undefined;
}

const NAMES = SKUS.flatMap((sku) => PRODUCT_NAMES[sku].map((name) => ({ sku, name }))).sort(
  (a, b) => b.name.length - a.name.length,
);
const PRODUCT = new RegExp(`\\b(${NAMES.map(({ name }) => name.replace('-', '\\-')).join('|')})\\b`, 'g');
const QUANTITY = new RegExp(
  `(?:^|\\s)(${NUMBER})\\s*(?:x\\s*)?(?:(?:pairs?|packs?)\\s+of\\s+)?(?:more\\s+)?$`,
);

function readItems(text: string): { sku: Sku; quantity: number }[] {
  const items: { sku: Sku; quantity: number }[] = [];
  let from = 0;
  for (const match of text.matchAll(PRODUCT)) {
    const sku = NAMES.find(({ name }) => name === match[1])?.sku;
    if (sku === undefined) continue;
    // The quantity is just before the name, after the previous product: "two mugs and 3 caps".
    const before = text.slice(from, match.index);
    const said = QUANTITY.exec(before)?.[1];
    // As typed, even when it is no count ("-3", "2.5"): the gate's schema says what a quantity may be.
    const quantity = said === undefined ? 1 : readNumber(said);
    items.push({ sku, quantity: quantity ?? 1 });
    from = match.index + match[0].length;
  }
  return items;
}
