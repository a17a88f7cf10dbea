// The deck of a deal, exactly as the server shuffles it (server/engine/cards.py):
//
//   key  = deal_key(seed, deal_no, entropy)
//   deck = random.Random(key).shuffle(the 48 cards), 16 cards a seat in order
//
// ported from CPython's `random` (3.11): a str seed becomes the big-endian integer of its
// UTF-8 bytes followed by their SHA-512, fed to MT19937's init_by_array as 32-bit words,
// least significant first; shuffle draws `getrandbits(k)` until it falls below i + 1.
// Nothing here is a rule of the game: only the arithmetic the commitment names, so a
// player can check it in their own browser (verify.js). tests/client/test_verify_in_browser.py
// compares it with the Python engine over many seeds.

const RANKS = "3456789TJQKA2";
const SUITS = "SHDC";
const HAND_SIZE = 16;
const N = 624;
const M = 397;

const encoder = new TextEncoder();

/** sha-2 of `text` (UTF-8): lowercase hex for "SHA-256", raw bytes otherwise. */
async function digest(algorithm, text) {
  return new Uint8Array(await crypto.subtle.digest(algorithm, encoder.encode(text)));
}

export function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Hex(text) {
  return hex(await digest("SHA-256", text));
}

/** The 48-card deck of `removedAce`'s rules, in the engine's card order (rank * 4 + suit). */
export function deck(removedAce) {
  const gone = new Set(["2H", "2D", "2C", removedAce]);
  const cards = [];
  for (const r of RANKS) for (const s of SUITS) if (!gone.has(r + s)) cards.push(r + s);
  return cards;
}

/** `deal_key`: the string deal `dealNo`'s deck is shuffled from (`seed`: its decimal text). */
export async function dealKey(seed, dealNo, entropy = []) {
  if (!entropy.some((e) => e)) return `paodekuai/${seed}/${dealNo}`;
  const mixed = await sha256Hex(`paodekuai-mix/v1/${seed}/${dealNo}/${entropy.join("/")}`);
  return `paodekuai/${mixed}/${dealNo}`;
}

/** MT19937 as CPython seeds and draws it. */
class Twister {
  constructor(key) {
    this.mt = new Uint32Array(N);
    this.index = N;
    this.initByArray(key);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  uint32() {
    const mt = this.mt;
    if (this.index >= N) {
      for (let kk = 0; kk < N; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7fffffff);
        mt[kk] = mt[(kk + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `getrandbits(k)` for 0 < k <= 32. */
  bits(k) {
    return this.uint32() >>> (32 - k);
  }

  /** `_randbelow_with_getrandbits(n)`. */
  below(n) {
    const k = 32 - Math.clz32(n);
    let r = this.bits(k);
    while (r >= n) r = this.bits(k);
    return r;
  }
}

/** The words `random.seed(text)` (version 2) hands to init_by_array. */
async function seedWords(text) {
  const raw = encoder.encode(text);
  const sum = await digest("SHA-512", text);
  let bytes = new Uint8Array(raw.length + sum.length);
  bytes.set(raw);
  bytes.set(sum, raw.length);
  // int.from_bytes(..., "big"): leading zero bytes carry no bits.
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  bytes = bytes.subarray(start);
  const words = new Uint32Array(Math.max(1, Math.ceil(bytes.length / 4)));
  for (let w = 0; w < words.length; w++) {
    let value = 0;
    for (let b = 3; b >= 0; b--) {
      const at = bytes.length - 1 - (4 * w + b);
      value = value * 256 + (at >= 0 ? bytes[at] : 0);
    }
    words[w] = value;
  }
  return words;
}

/** `random.Random(key).shuffle(list)`, on a copy. */
export async function shuffled(key, list) {
  const twister = new Twister(await seedWords(key));
  const x = [...list];
  for (let i = x.length - 1; i > 0; i--) {
    const j = twister.below(i + 1);
    [x[i], x[j]] = [x[j], x[i]];
  }
  return x;
}

/** `deal_hands`: each seat's cards (codes, sorted by code) of deal `dealNo`. */
export async function dealHands(removedAce, seed, dealNo, entropy = []) {
  const cards = await shuffled(await dealKey(seed, dealNo, entropy), deck(removedAce));
  return [0, 1, 2].map((s) => cards.slice(s * HAND_SIZE, (s + 1) * HAND_SIZE).sort());
}
