// The seq2seq mode's string tasks over the letters a-h, words of 3 to 8 letters: training
// pairs and held-out words never seen in training, from a seeded generator (the same
// setup as bench/studies/reverse.mjs).

export const LETTERS = 'abcdefgh';
export const MAX_LEN = 8;

export const TASKS = {
  reverse: { name: 'reverse', answer: (w) => [...w].reverse().join('') },
  sort: { name: 'sort', answer: (w) => [...w].sort().join('') },
};

/** train: n pairs, test: 200 held-out pairs (their sources never appear in train). */
export function taskData(task, { n = 20000, seed = 7 } = {}) {
  const answer = TASKS[task].answer;
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
  const word = () => {
    const len = 3 + Math.floor(rnd() * (MAX_LEN - 2));
    let w = '';
    for (let i = 0; i < len; i++) w += LETTERS[Math.floor(rnd() * LETTERS.length)];
    return w;
  };
  const held = new Set();
  while (held.size < 200) held.add(word());
  const train = [];
  while (train.length < n) {
    const w = word();
    if (!held.has(w)) train.push([w, answer(w)]);
  }
  return { train, test: [...held].map((w) => [w, answer(w)]) };
}

/** null when w is a valid input, else what is wrong with it, in words. */
export function checkInput(w) {
  if (!w.length) return 'type some letters first';
  if (w.length > MAX_LEN) return `at most ${MAX_LEN} letters: the model was trained on words of 3 to ${MAX_LEN}`;
  const bad = [...new Set([...w].filter((c) => !LETTERS.includes(c)))];
  if (bad.length) return `the model knows only the letters ${LETTERS.split('').join(', ')}; not ${bad.map((c) => `“${c}”`).join(', ')}`;
  return null;
}
