// "Then and now" (issue 27): the run's first sample beside its newest, in large type, so the
// change from letters to words is seen at a glance; the timeline under it keeps every one.
// Each side names the step and validation loss of the weights that wrote it (data-step too).
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

/** Puts a sample on one side: its step and validation loss, and its text. */
function put(id, step, valLoss, text) {
  const side = $(id);
  side.dataset.step = String(step);
  side.querySelector('.at').textContent = `step ${fmt.count(step)} · validation loss ${fmt.loss(valLoss)}`;
  side.querySelector('pre').textContent = text;
}

/** A new sample of the run: the first one is "then" (and "now" until the next); each later one "now". */
export function showSample(step, valLoss, text) {
  if (!$('sample-then').dataset.step) put('sample-then', step, valLoss, text);
  put('sample-now', step, valLoss, text);
  $('then-now').dataset.samples = String(Number($('then-now').dataset.samples ?? 0) + 1);
}

/** Forgets the samples of the model before (a new, opened or restored model). */
export function clearSamples() {
  for (const id of ['sample-then', 'sample-now']) {
    delete $(id).dataset.step;
    $(id).querySelector('.at').textContent = id === 'sample-then' ? 'the first validation' : 'the latest validation';
    $(id).querySelector('pre').textContent = id === 'sample-then' ? 'What the model writes at its first validation appears here.'
      : 'And what it writes at its latest, here.';
  }
  delete $('then-now').dataset.samples;
}
