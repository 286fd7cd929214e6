// The page of browser.mjs: fetches the model folder served at /model/, imports it and
// generates. window.example holds the model (or the error) for tests.
import { importSafetensors } from '/pkg/src/js/index.js';

const $ = (id) => document.getElementById(id);

async function fetchFile(name, optional) {
  const res = await fetch(`/model/${name}`);
  if (res.status === 404 && optional) return undefined;
  if (!res.ok) throw new Error(`/model/${name}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function main() {
  const files = {
    'config.json': await fetchFile('config.json'),
    'model.safetensors': await fetchFile('model.safetensors'),
  };
  const tok = await fetchFile('tokenizer.wft', true);
  if (tok) files['tokenizer.wft'] = tok;
  const model = await importSafetensors(files);
  const { architectures } = JSON.parse(new TextDecoder().decode(files['config.json']));
  $('status').textContent = `${architectures[0]}, ${model.paramCount.toLocaleString('en-US')} parameters, ` +
    `${model.info().threads} thread(s)${tok ? '' : '; no tokenizer.wft: it cannot read text'}`;
  $('go').disabled = !tok;
  $('form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('go').disabled = true;
    $('out').textContent = $('prompt').value;
    try {
      for await (const piece of model.generate($('prompt').value, { maxTokens: Number($('tokens').value), temperature: 0.8 })) {
        $('out').textContent += piece;
      }
    } finally {
      $('go').disabled = false;
    }
  });
  return model;
}

window.example = main().then((model) => ({ model }), (error) => {
  $('status').textContent = `Could not load the model: ${error.message}`;
  return { error: error.message };
});
