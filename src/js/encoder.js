// An encoder-only model (arch 'encoder'): bidirectional self-attention, padding masks, and
// two objectives, per-token cross-entropy and a mean squared error of the final states
// against target vectors. Inputs are token ids or vectors. A view of a Model (view.js).
import { Model } from './model.js';
import { ModelView } from './view.js';

/** Encoder defaults under the caller's config (small enough to train in a browser tab). */
export const ENCODER_DEFAULTS = { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 32, vocabSize: 96 };

export class Encoder extends ModelView {
  /**
   * @internal use createEncoder. The arch is always 'encoder'.
   * @param {import('./runtime.js').Runtime} rt
   * @param {object} config a partial config over ENCODER_DEFAULTS
   */
  static create(rt, config = {}) {
    return new Encoder(Model.create(rt, { ...ENCODER_DEFAULTS, ...config, arch: 'encoder' }), true);
  }

  /**
   * A view of a Model whose arch is 'encoder', e.g. one loaded from a checkpoint. The model
   * stays the caller's: the view's dispose() leaves it alone.
   * @example const enc = Encoder.from(await loadModel(bytes));
   */
  static from(model) {
    return new Encoder(ModelView.checkArch(model, 'encoder', 'Encoder'), false);
  }

  /**
   * One optimizer step on a batch: {inputs | inputVecs, lengths?, targets | targetVecs, B, T}.
   * Positions past lengths[b] are padding: nothing attends to them and no loss counts them.
   * Dropout (config.dropout) applies here. Returns {loss, gradNorm, lr, step}.
   * @param {import('./batch.js').Batch} batch
   * @example
   * const info = enc.trainStep({ inputs, targets, lengths: [16, 9], B: 2, T: 16 });
   * const mse = enc.trainStep({ inputVecs, targetVecs, B: 32, T: 16 }).loss;
   */
  trainStep(batch) {
    const core = this.core;
    core.idle();
    return core.stepBatch(batch);
  }

  /**
   * Evaluation forward (no dropout): {loss (null without targets), logits (null with
   * targetVecs), hidden}. logits is a Float32Array [B*T*vocabSize], hidden the final states
   * [B*T*dModel] after the final norm.
   * @param {import('./batch.js').Batch} batch
   * @example const { hidden } = enc.forward({ inputs, B: 1, T: inputs.length });
   */
  forward(batch) {
    const core = this.core;
    core.idle();
    return core.forwardBatch(batch, { hidden: true });
  }
}
