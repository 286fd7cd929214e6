// Each line must fail to compile: types.test.mjs checks that the .d.ts really constrains.
import { createModel, loadModel, loadTokenizer, type Model } from 'wasmformer';

export async function wrong(model: Model) {
  await createModel('huge');                                   // not a preset
  await createModel({ activation: 'tanh' });                   // not an activation
  await model.train('text', { stepz: 10 });                    // no such option
  const n: string = model.paramCount;                          // a number
  for await (const piece of model.generate(42)) void piece;    // prompt is a string
  model.generate('x', { onToken: (piece: number) => piece });  // pieces are strings
  await loadTokenizer('{}', { format: 'json' });               // no such option
  await loadModel('model.gguf');                               // a path is not a source (loadModelFile)
  await loadModel(new Uint8Array(4), { onProgress: (p: string) => p }); // progress is {loaded, total}
}
