// Compiled (not run) by types.test.mjs under node16, nodenext and bundler resolution: the
// Node-only functions through the 'wasmformer/node' entry (which needs no custom
// condition), the worker script's entry, and WorkerModel's Model API.
import { loadModelFile, saveModelFile, createWorkerModel, type WorkerModel, type MemoryUsage } from 'wasmformer/node';
import type {} from 'wasmformer/worker';

export async function roundTrip(path: string): Promise<number> {
  const model = await loadModelFile(path);
  model.setMetadata({ note: 'kept with the model' });
  const meta: unknown = model.metadata;
  const bytes: number = await saveModelFile(model, path);
  const wm: WorkerModel = await createWorkerModel('tiny');
  const memory: MemoryUsage = await wm.memory();
  const { loss } = await wm.trainStep([1, 2], [2, 3], 1, 2);
  const { logits } = await wm.forward([1, 2], null, 1, 2);
  const lr: number = wm.lr + wm.optimizer.beta2 + (wm.tokenizer?.vocabSize ?? 0) + memory.total + loss + logits.length;
  await wm.setMetadata({ meta });
  wm.dispose();
  return bytes + lr;
}
