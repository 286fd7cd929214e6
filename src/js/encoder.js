// An encoder-only model (arch 'encoder'): bidirectional self-attention, padding masks, and
// two objectives, per-token cross-entropy and a mean squared error of the final states
// against target vectors. Inputs are token ids or vectors. A thin layer over Model.
import { WfError } from './runtime.js';
import { Model } from './model.js';
import { readStepInfo, withBatch } from './batch.js';

/** Encoder defaults under the caller's config (small enough to train in a browser tab). */
export const ENCODER_DEFAULTS = { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 32, vocabSize: 96 };

export class Encoder {
  /** @internal use createEncoder */
  constructor(model) {
    /** The underlying Model: tensors(), getTensor(), setTensor(), memory(), optimizer. */
    this.model = model;
  }

  /**
   * @internal use createEncoder. The arch is always 'encoder'.
   * @param {import('./runtime.js').Runtime} rt
   * @param {object} config a partial config over ENCODER_DEFAULTS
   */
  static create(rt, config = {}) {
    return new Encoder(Model.create(rt, { ...ENCODER_DEFAULTS, ...config, arch: 'encoder' }));
  }

  /**
   * Wraps a Model whose arch is 'encoder', e.g. one loaded from a checkpoint.
   * @example const enc = Encoder.from(await loadModel(bytes));
   */
  static from(model) {
    if (model.config.arch !== 'encoder') throw new WfError('WF_ERR_STATE', `Encoder needs an encoder; this model is a ${model.config.arch}`);
    return new Encoder(model);
  }

  get rt() { return this.model.rt; }
  get handle() { return this.model.handle; }
  /** The model's config (strings and booleans). */
  get config() { return this.model.config; }
  get step() { return this.model.step; }
  get paramCount() { return this.model.paramCount; }

  /**
   * Changes optimizer settings (lr, beta1, beta2, eps, weightDecay, warmup, decaySteps,
   * minLrRatio, gradClip); the rest stay.
   * @example enc.setOptimizer({ lr: 3e-4, beta2: 0.999, weightDecay: 0, gradClip: 0 }); // Adam
   */
  setOptimizer(settings) { this.model.setOptimizer(settings); }

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
    this.model.idle();
    const rt = this.rt;
    return withBatch(rt, batch, this.config.dModel, (pb) => rt.withBuffer(16, (info) => {
      this.model.call(rt.M._wf_model_step(this.handle, pb, info));
      return readStepInfo(rt, info);
    }));
  }

  /**
   * Evaluation forward (no dropout): {loss (null without targets), logits (null with
   * targetVecs), hidden}. logits is a Float32Array [B*T*vocabSize], hidden the final states
   * [B*T*dModel] after the final norm.
   * @param {import('./batch.js').Batch} batch
   * @example const { hidden } = enc.forward({ inputs, B: 1, T: inputs.length });
   */
  forward(batch) {
    this.model.idle();
    const rt = this.rt;
    const cfg = this.config;
    const hasTargets = batch.targets != null || batch.targetVecs != null;
    return withBatch(rt, batch, cfg.dModel, (pb) => rt.withBuffer(4, (lossp) => {
      this.model.call(rt.M._wf_model_forward(this.handle, pb, lossp));
      const n = batch.B * batch.T;
      const lp = rt.M._wf_model_logits(this.handle) >>> 2, hp = rt.M._wf_model_hidden(this.handle) >>> 2;
      return {
        loss: hasTargets ? rt.f32[lossp >>> 2] : null,
        logits: lp ? rt.f32.slice(lp, lp + n * cfg.vocabSize) : null,
        hidden: rt.f32.slice(hp, hp + n * cfg.dModel),
      };
    }));
  }

  /** Frees the wasm memory. Using the encoder afterwards throws WF_ERR_DISPOSED. */
  dispose() { this.model.dispose(); }
}
