// Hostile strings for the tokenizer agreement tests (tests/js/hf-tokenizer.test.mjs) and the
// fuzz seeds: hand-picked cases (every script the fixtures saw and some they did not,
// combining marks, emoji sequences, every kind of whitespace and run of it, digits of many
// scripts, contractions, the fixtures' special tokens whole and cut, lone surrogates, long
// runs across the 64-byte chunk cut), then random concatenations of such fragments from a
// seeded xorshift, so a run is the same corpus every time.

const HAND = [
  '', ' ', '  ', '\n', '\n\n\n', '\t', ' \t\n ', 'a', 'Hello world', ' Hello world', 'Hello  world', 'Hello   world  ',
  "I'm here, you're there; we've, they'll, she'd, it's, don't", "'s 't 're 've 'm 'll 'd", "'S 'T 'RE", 'it’s ‘curly’',
  'The quick brown fox jumps over the lazy dog.', 'ALL CAPS SHOUTING!!!', 'mIxEd CaSe',
  '1234567890', ' 42 ', '3.14159', '1,000,000', '٣٤٥', '४२', '１２３', '½ ² ³ ⅓ Ⅻ ⑫', 'x²+y²=z²', 'a1b2c3', '  12  34  ',
  'Ηλλάδα Ελλάδα', 'Съешь же ещё', '我能吞下玻璃而不伤身体', 'こんにちは世界', '안녕하세요', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया', 'สวัสดีครับ',
  'e\u0301 a\u0308 n\u0303 Z\u0351\u036B\u0343', 'café naïve coöperate', 'Å Å', 'ﬁ ﬂ', 'ǅ', 'İstanbul ß ẞ',
  '😀', '😀😃😄', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷🇩🇪', '🏳️‍🌈', '❤️', '\u200d', '\u200b', 'a\u200bb', '\ufeff', '\ufeffBOM', '\u0085', 'a\u0085b',
  '\u00a0', 'a\u00a0b', '\u2028', '\u2029', '\u3000', 'a\u3000b', '\u1680', '\u2009\u200a', '\u180e', '\u000b\u000c\r\n',
  '\r\n\r\n', ' \n \n ', '\n word', '\n\n word', '  \n\tword', 'word\n', 'word  ', 'a  \n  b',
  '<|endoftext|>', 'a<|endoftext|>b', '<|endoftext|><|endoftext|>', ' <|endoftext|> ', '<|endoftext', '<|im_start|>user\nhi<|im_end|>',
  '<s>', '</s>', '<unk>', 'x<s>y', '<s> hello', 'hello </s>', '<0x41>', '▁', '▁▁', 'a▁b', '▁hello',
  'def f(x):\n    return x**2\n', '\tif (a && b) { c++; }', '#!/bin/sh', '<<<>>>', '!!!???', '...', '—–-', '@#$%^&*()',
  'a'.repeat(200), ' '.repeat(100), ' '.repeat(70) + 'x', '\n'.repeat(80), 'ab'.repeat(150), 'é'.repeat(100), '日本'.repeat(80),
  '😀'.repeat(40), 'x' + ' '.repeat(65) + 'y', '-'.repeat(130), '1'.repeat(90), 'abc '.repeat(30).trim(),
  '\ud800', 'a\udc00b', '\ud83d', 'lone \udfff surrogate',
];

const FRAGMENTS = ['a', 'b', 'the', ' the', 'The', 'ing', ' ', '  ', '\n', '\t', '\r\n', "'s", "'ll", "'", '’', ',', '.', '!', '?', '-', '—',
  '0', '7', '42', '٣', '४', '１', '²', '½', 'Ⅻ', 'é', 'e\u0301', 'ß', 'Ω', 'ж', 'ش', 'ש', 'क', 'ก', '中', '日本', '한', 'ア',
  '😀', '👍🏽', '👨‍👩‍👧', '🇫🇷', '❤️', '\u200d', '\u00a0', '\u0085', '\ufeff', '\u3000', '\u2028', '<|endoftext|>', '<s>', '</s>', '▁',
  '(', ')', '{', '}', '#', '$', '%', '&', '*', '_', '=', '+', '<', '>', '/', '\\', '|', '~', '`', '"', '\u0000', '\u0007', '\u007f',
  'Mr.', 'Darcy', 'Elizabeth', ' Bennet', 'pride', ' prejudice', 'x'.repeat(70), ' '.repeat(66)];

/** A seeded xorshift32 in [0, 1). */
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

/** Runs without a space of 1-, 2-, 3- and 4-byte characters, 60 to 200 bytes: where
 * wasmformer's 64-byte cut falls inside or between characters. */
function longRuns(n, rnd) {
  const chars = ['a', 'é', 'ж', '日', 'ア', '😀', '𝒳', 'Z', '9', '-'];
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const bytes = 60 + Math.floor(rnd() * 140);
    const mix = chars.slice(0, 2 + Math.floor(rnd() * (chars.length - 2)));
    while (new TextEncoder().encode(s).length < bytes) s += mix[Math.floor(rnd() * mix.length)];
    out.push(rnd() < 0.5 ? s : ' ' + s);
  }
  return out;
}

/** count strings: the hand-picked ones, 40 long runs, then random ones. */
export function hostileStrings(count = 500, seed = 12345) {
  const rnd = rng(seed);
  const out = [...HAND, ...longRuns(40, rnd)];
  while (out.length < count) {
    const n = 1 + Math.floor(rnd() * 12);
    let t = '';
    for (let i = 0; i < n; i++) t += FRAGMENTS[Math.floor(rnd() * FRAGMENTS.length)];
    out.push(t);
  }
  return out;
}

/** Byte strings that are not UTF-8: truncated sequences, lone continuation bytes, overlong
 * forms, surrogates, bytes above F4, mixed into text. No NUL (llama2.c's C strings end there). */
export function invalidUtf8(count = 100, seed = 777) {
  const rnd = rng(seed);
  const enc = new TextEncoder();
  const bad = [[0x80], [0xbf], [0xc0, 0xaf], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff], [0xfe], [0xf0, 0x9f], [0xc3]];
  const good = ['a', ' ', 'é', '日', '😀', 'the', '\n', '42', '▁'];
  const out = [];
  for (let i = 0; i < count; i++) {
    const parts = [];
    const n = 1 + Math.floor(rnd() * 8);
    for (let k = 0; k < n; k++) parts.push(...(rnd() < 0.5 ? bad[Math.floor(rnd() * bad.length)] : enc.encode(good[Math.floor(rnd() * good.length)])));
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(parts));
      parts.push(0xff); // it happened to be valid: make it not
    } catch { /* invalid, as wanted */ }
    out.push(Uint8Array.from(parts));
  }
  return out;
}
