#!/usr/bin/env node
// The wasmformer command line: train a model on a text file, generate from it, evaluate
// it, describe it. Arguments are parsed with node:util's parseArgs. Exit codes: 0 done,
// 1 the work failed (a message says why), 2 bad arguments; a training run stopped, after
// saving what it had done: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP (a closed terminal),
// 141 its output piped into a program that left (as SIGPIPE would).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as wf from '../src/js/node.js';
import { nearest } from '../src/js/options.js';
import { checkpointClock, checkpointSeconds, fileBytes, preflightOut, signalExitCode, stopSignals } from './keep-run.js';

const BUNDLED_TEXT = fileURLToPath(new URL('../data/austen/pride_and_prejudice.txt', import.meta.url));
const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/** Bad arguments: exit code 2. */
class UsageError extends Error {}

const help = { type: 'boolean', short: 'h', help: 'show this help' };

// ---- flags from the config table: one per model config field and optimizer setting ----

/** nLayer -> n-layer */
const kebab = (name) => name.replace(/[A-Z]+/g, (m) => `-${m.toLowerCase()}`);
const PLACEHOLDER = { enum: 'NAME', bool: 'BOOL', int: 'N', seed: 'N', real: 'X' };

/** A field's range in words: "in [1, 1024]", "in (0, 1)", ">= 0". */
function range(f) {
  if (f.max === undefined) return `${f.bounds[0] === '(' ? '>' : '>='} ${f.min}`;
  return `in ${f.bounds[0]}${f.min}, ${f.max}${f.bounds[1]}`;
}

/** Whether n is in a field's range. */
function inRange(f, n) {
  return (f.bounds[0] === '(' ? n > f.min : n >= f.min) && (f.max === undefined || (f.bounds[1] === ')' ? n < f.max : n <= f.max));
}

/** parseArgs options for the table's fields but those the command has its own way to set. */
function tableOptions(fields, skip, group, defaultText) {
  return Object.fromEntries(fields.filter((f) => !skip.has(f.name)).map((f) => [kebab(f.name), {
    type: 'string', value: PLACEHOLDER[f.type], group, field: f,
    help: `${f.meaning}; ${f.values ? f.values.join(', ') : f.type === 'bool' ? 'true or false' : range(f)} (default ${defaultText(f)})`,
  }]));
}

// the preset a new model gets: the table's first, the time-to-quality bench's winner
// (src/presets.h, bench/ttq/RESULTS.md)
const DEFAULT_PRESET = wf.DEFAULT_PRESET;
const PRESET_FIELDS = new Set(Object.keys(wf.PRESETS[DEFAULT_PRESET]));
// the command trains decoders (no arch, nor an encoder-decoder's fields); the tokenizer sizes
// the vocabulary; --seed seeds the weights and the batches
// LoRA's fields are finetune's (--lora-rank, --lora-alpha, --lora-targets)
const MODEL_OPTIONS = tableOptions(wf.CONFIG_FIELDS, new Set(['arch', 'nEncLayer', 'maxBeam', 'vocabSize', 'seed', 'loraRank', 'loraAlpha', 'loraTargets']), 'Model (over the preset; not with --resume)',
  (f) => (PRESET_FIELDS.has(f.name) ? 'the preset\'s' : f.default));
// --lr has its own flag; train() sets where the schedule starts
const OPTIM_OPTIONS = tableOptions(wf.OPTIM_FIELDS, new Set(['lr', 'start']), 'Optimizer',
  (f) => (f.name === 'warmup' ? 'a tenth of the run, at most 100' : f.name === 'decaySteps' ? 'the rest of the run'
    : PRESET_FIELDS.has(f.name) ? 'the preset\'s' : f.default));

/** The value of a table field's flag, checked against the field's type and range. */
function fieldValue(flag, f, text) {
  if (f.type === 'enum') {
    if (!f.values.includes(text)) throw new UsageError(`--${flag} must be one of ${f.values.join(', ')}, not "${text}"`);
    return text;
  }
  if (f.type === 'bool') {
    if (text !== 'true' && text !== 'false') throw new UsageError(`--${flag} must be true or false, not "${text}"`);
    return text === 'true';
  }
  const n = Number(text), int = f.type !== 'real';
  const ok = text.trim() !== '' && Number.isFinite(n) && (!int || Number.isInteger(n)) && inRange(f, n);
  if (!ok) throw new UsageError(`--${flag} must be ${int ? 'an integer' : 'a number'} ${range(f)}, not "${text}"`);
  return n;
}

/** The values of the table flags given, by the fields' JavaScript names. */
function tableValues(options, o) {
  const out = {};
  for (const [flag, { field }] of Object.entries(options)) if (o[flag] !== undefined) out[field.name] = fieldValue(flag, field, o[flag]);
  return out;
}

const COMMANDS = {
  train: {
    args: '[file.txt]',
    summary: 'train a model on a UTF-8 text file (default: the bundled Pride and Prejudice)',
    options: {
      preset: { type: 'string', short: 'p', value: 'NAME', help: `model size: ${Object.keys(wf.PRESETS).join(', ')} or auto (default micro; with --time, auto)` },
      config: { type: 'string', short: 'c', value: 'JSON', help: 'config fields over the preset, e.g. \'{"nLayer":2,"context":128}\'' },
      steps: { type: 'string', short: 's', value: 'N', help: `the run's length in steps (default: the preset's, ${Object.entries(wf.PRESET_STEPS).map(([k, v]) => `${k} ${v}`).join(', ')}); with --resume: N more steps (past the run's end, at its last learning rate)` },
      time: { type: 'string', value: 'T', help: 'train for a time budget instead (90s, 5m, 1.5h: the unit is required): the learning-rate schedule follows the clock; with --resume: T more' },
      out: { type: 'string', short: 'o', value: 'FILE', help: 'where the model is saved (default model.wf)' },
      resume: { type: 'boolean', short: 'r', help: 'continue the run saved in --out, on the same text (its batch size, schedule and what it has spent come from the file); to its end, or --steps / --time more' },
      force: { type: 'boolean', help: 'overwrite --out with a new model' },
      'checkpoint-every': { type: 'string', value: 'T', help: 'also save --out every T while training (90s, 5m, 1.5h; 0: only at the end; default 5m): a killed run loses at most that' },
      batch: { type: 'string', short: 'b', value: 'N', help: 'windows per batch (default: the preset\'s)' },
      lr: { type: 'string', value: 'X', help: 'peak learning rate (default: the preset\'s)' },
      'eval-interval': { type: 'string', value: 'N', help: `validate every N steps (default ${wf.TRAIN_DEFAULTS.evalInterval}; 0: never)` },
      'val-fraction': { type: 'string', value: 'F', help: `share of the text held out for validation (default ${wf.TRAIN_DEFAULTS.valFraction})` },
      'eval-mode': { type: 'string', value: 'MODE', help: 'sample (default: 4 random held-out batches, cheap and noisy) or windows (all of the held-out split, deterministic, with bits per character); the final line always scores all of it' },
      seed: { type: 'string', value: 'N', help: 'seed of the weights and the batch order' },
      tokenizer: { type: 'string', short: 't', value: 'KIND', help: 'char (default) or bpe, learned from the text' },
      vocab: { type: 'string', value: 'N', help: 'with --tokenizer bpe: tokens, 256 bytes + merges (default 512)' },
      help,
      ...MODEL_OPTIONS,
      ...OPTIM_OPTIONS,
    },
    run: train,
  },
  finetune: {
    args: '<model> [file.txt]',
    summary: 'fine-tune a model (a model file, a GGUF file, or a Hugging Face folder) on a text file: LoRA adapters, or chosen tensors',
    options: {
      'lora-rank': { type: 'string', value: 'N', help: 'rank of the LoRA adapters (default 8; 0: no adapters, --train says what trains)' },
      'lora-alpha': { type: 'string', value: 'X', help: 'their scale: each adds (alpha / rank) x A^T B^T (default 2 x rank)' },
      'lora-targets': { type: 'string', value: 'LIST', help: 'the linears they adapt: q,k,v,o,fc,up,down or attn, mlp, all (default all)' },
      train: { type: 'string', value: 'LIST', help: 'tensors that train besides the adapters, e.g. head,norm,layers@-2 (with --lora-rank 0: all that trains; default all)' },
      steps: { type: 'string', short: 's', value: 'N', help: 'training steps (default 500)' },
      lr: { type: 'string', value: 'X', help: 'peak learning rate (default 1e-3)' },
      batch: { type: 'string', short: 'b', value: 'N', help: 'windows per batch (default 8)' },
      'eval-interval': { type: 'string', value: 'N', help: `validate every N steps (default ${wf.TRAIN_DEFAULTS.evalInterval}; 0: never)` },
      'val-fraction': { type: 'string', value: 'F', help: `share of the text held out for validation (default ${wf.TRAIN_DEFAULTS.valFraction})` },
      seed: { type: 'string', value: 'N', help: 'seed of the batch order' },
      out: { type: 'string', short: 'o', value: 'FILE', help: 'where the fine-tuned model is saved, with its run (default finetuned.wf; train --resume goes on with it)' },
      force: { type: 'boolean', help: 'overwrite --out' },
      'checkpoint-every': { type: 'string', value: 'T', help: 'also save --out every T while training (90s, 5m, 1.5h; 0: only at the end; default 5m; the adapters unmerged)' },
      peft: { type: 'string', value: 'DIR', help: 'also write the adapters in PEFT\'s layout (adapter_model.safetensors, adapter_config.json) there' },
      merge: { type: 'boolean', help: 'fold the adapters into the weights before saving --out: a plain model' },
      quantize: { type: 'string', short: 'q', value: 'TYPE', help: 'quantize the base first, q8_0 or q4_0: the adapters train over its blocks (QLoRA; the base stays frozen)' },
      help,
    },
    run: finetune,
  },
  generate: {
    args: '<model.wf>',
    summary: 'generate text from a trained model (or a GGUF file), streamed to stdout',
    options: {
      prompt: { type: 'string', value: 'TEXT', help: 'text to continue (default: none)' },
      tokens: { type: 'string', short: 'n', value: 'N', help: `tokens to generate (default ${wf.GENERATE_DEFAULTS.maxTokens}, as generate()'s maxTokens)` },
      temperature: { type: 'string', short: 't', value: 'X', help: `sampling temperature, 0 = greedy (default ${wf.GENERATE_DEFAULTS.temperature})` },
      'top-k': { type: 'string', value: 'K', help: 'sample among the K most likely tokens (default: all)' },
      'top-p': { type: 'string', value: 'P', help: 'sample among the tokens holding probability P (default 1)' },
      seed: { type: 'string', value: 'N', help: 'sampler seed: the same seed gives the same text (default: random)' },
      stop: { type: 'string', multiple: true, value: 'TEXT', help: 'stop before this text (repeatable)' },
      'allow-unknown': { type: 'boolean', help: 'may sample a char tokenizer\'s <unk> (printed as U+FFFD; default: never)' },
      help,
    },
    run: generate,
  },
  eval: {
    args: '<model.wf> <file.txt>',
    summary: 'mean loss and perplexity of a model on a text file',
    options: {
      'max-tokens': { type: 'string', value: 'N', help: 'score only the first N tokens' },
      json: { type: 'boolean', help: 'print the result as JSON' },
      help,
    },
    run: evaluate,
  },
  info: {
    args: '<model.wf>',
    summary: 'config, parameters, size and steps trained of a model file',
    options: {
      json: { type: 'boolean', help: 'print everything as JSON' },
      help,
    },
    run: info,
  },
  export: {
    args: '<model.wf>',
    summary: 'write a model as Hugging Face files (model.safetensors, config.json) into a folder, or as a GGUF file',
    options: {
      format: { type: 'string', short: 'f', value: 'NAME', help: 'safetensors (default) or gguf (llama.cpp\'s file; a Llama-shaped model)' },
      out: { type: 'string', short: 'o', value: 'PATH', help: 'the folder to write (safetensors; created if missing) or the file (gguf); required' },
      quantize: { type: 'string', short: 'q', value: 'TYPE', help: 'gguf: store the linears and embeddings as q8_0 or q4_0 (default: as the model has them)' },
      merge: { type: 'boolean', help: 'fold LoRA adapters into the weights first (a Hugging Face class has no place for them; finetune --peft writes them apart)' },
      help,
    },
    run: exportModel,
  },
  import: {
    args: '<dir | model.gguf | model.bin>',
    summary: 'read Hugging Face files (config.json, model.safetensors, tokenizer.json), a GGUF file or a llama2.c model file into a model file',
    options: {
      out: { type: 'string', short: 'o', value: 'FILE', help: 'the model file to write (required)' },
      tokenizer: { type: 'string', short: 't', value: 'FILE', help: "a llama2.c model's tokenizer.bin (llama2.c keeps it apart)" },
      quantize: { type: 'string', short: 'q', value: 'TYPE', help: 'store the linears and embeddings as q8_0 (8-bit blocks) or q4_0 (4-bit), or f32 (default: as the file has them)' },
      force: { type: 'boolean', help: 'overwrite --out if it exists' },
      help,
    },
    run: importModel,
  },
};

// ---- help and argument checking ----

/** The options' help, a block per group (the command's own options first). */
function optionLines(options) {
  const rows = Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`, o.help, o.group ?? 'Options']);
  const width = Math.max(...rows.map(([left]) => left.length));
  const groups = [...new Set(rows.map(([, , g]) => g))];
  return groups.map((g) => `${g}:\n${rows.filter((r) => r[2] === g).map(([left, text]) => `  ${left.padEnd(width)}  ${text}`).join('\n')}`).join('\n\n');
}

function commandHelp(name) {
  const c = COMMANDS[name];
  return `Usage: wasmformer ${name} ${c.args} [options]\n\n${c.summary[0].toUpperCase()}${c.summary.slice(1)}.\n\n${optionLines(c.options)}\n`;
}

function mainHelp() {
  const width = Math.max(...Object.entries(COMMANDS).map(([n, c]) => `${n} ${c.args}`.length));
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${`${n} ${c.args}`.padEnd(width)}  ${c.summary}`);
  return `Usage: wasmformer <command> [options]\n\nTrain small transformers on text and generate from them, in WebAssembly.\n\nCommands:\n${lines.join('\n')}\n\nRun "wasmformer <command> --help" for a command's options. Version ${VERSION}.\n`;
}

function integer(name, value, min) {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isInteger(n) || n < min) {
    throw new UsageError(`--${name} must be an integer >= ${min}, not "${value}"`);
  }
  return n;
}

function number(name, value, ok, what) {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(n) || !ok(n)) throw new UsageError(`--${name} must be ${what}, not "${value}"`);
  return n;
}

function positionals(name, got, min, max) {
  const c = COMMANDS[name];
  if (got.length < min) throw new UsageError(`missing ${c.args.split(' ').slice(got.length)[0]}`);
  if (got.length > max) throw new UsageError(`unexpected argument "${got[max]}"`);
}

function readText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
}

// ---- output ----

const out = process.stdout;

function duration(seconds) {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

const rate = (r) => (r >= 1000 ? `${(r / 1000).toFixed(1)}k` : `${Math.round(r)}`);
const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

/** The package's warnings (onWarning: unknown characters, no room for a roll-back copy) on
 * stderr, one line each, named by the command. */
const warn = (command) => (message) => process.stderr.write(`wasmformer ${command}: warning: ${message}\n`);

/** Training progress: one line redrawn in place on a terminal, plain lines otherwise (at
 * each validation, or every tenth of the way without validation, and at the end), its bar
 * toward target: {steps} (the model's step) or {seconds} (of training), from `from`. local:
 * the steps shown are this command's (finetune's N of --steps N), not the model's counter. */
function progressPrinter(tty, evalInterval, target, { local = false } = {}) {
  let lastDraw = 0, lastLine = -Infinity, drawn = false;
  const timed = target.seconds !== undefined, total = timed ? target.seconds : target.steps;
  const shown = (step) => (local ? step - target.from : step);
  return {
    update(p) {
      const done = timed ? p.secondsDone : p.step, end = done >= total;
      const label = timed ? ` (${duration(p.secondsDone)}/${duration(total)})` : `/${shown(total)}`;
      const val = p.valLoss === null ? '' : `  val ${p.valLoss.toFixed(3)}${p.valBpc === null || p.valBpc === undefined ? '' : ` (${p.valBpc.toFixed(3)} bpc)`}`;
      const eta = timed ? total - p.secondsDone : (p.elapsed / Math.max(1, p.step - target.from)) * (total - p.step);
      const stats = `loss ${p.loss.toFixed(3)}${val}  ${rate(p.tokensPerSecond)} tok/s  ETA ${duration(Math.max(0, eta))}`;
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 100 && !end && !p.validated) return;
        lastDraw = now;
        const share = Math.min(1, (done - target.from) / (total - target.from)), width = 24, filled = Math.round(width * share);
        out.write(`\r\x1b[2Kstep ${shown(p.step)}${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(100 * share)}%  ${stats}`);
        drawn = true;
        return;
      }
      const tenth = (total - target.from) / 10, part = (x) => Math.floor((x - target.from) / tenth);
      if (!(p.validated || end || (evalInterval === 0 && part(done) > part(lastLine)))) return;
      lastLine = done;
      out.write(`step ${shown(p.step)}${label}  ${stats}\n`);
    },
    /** A line of its own (a checkpoint saved); on a terminal the bar is redrawn after it. */
    note(line) {
      out.write(tty && drawn ? `\r\x1b[2K${line}\n` : `${line}\n`);
      drawn = false;
      lastDraw = 0;
    },
    end() {
      if (tty && drawn) out.write('\n');
      drawn = false;
    },
  };
}

// ---- commands ----

/** Seconds between checkpoints (--checkpoint-every; default 5 minutes), 0 for none. */
function checkpointEvery(o) {
  const seconds = checkpointSeconds(o['checkpoint-every'] ?? '5m');
  if (seconds === null) throw new UsageError(`--checkpoint-every must be a duration such as 90s, 5m or 1.5h, or 0, not "${o['checkpoint-every']}"`);
  return seconds;
}

/**
 * What keeps a run of train or finetune: --out checked before the first step, the signals
 * that stop it (saving its steps), checkpoints every `seconds` (progress notes them) and
 * stdout going away (piped into head, a closed terminal), which stops the run as a
 * signal does instead of exiting before the save. Returns {signal, outputLost, clock,
 * exitCode(), dispose(), drive(more)}.
 */
async function keepRun(model, path, seconds, progress, before) {
  await preflightOut(path, fileBytes(model));
  const ac = new AbortController();
  const stops = stopSignals(() => ac.abort());
  const run = {
    outputLost: null,
    get signal() { return stops.signal; },
    clock: checkpointClock({
      model, path, seconds, before,
      onSaved: (step) => { if (!run.outputLost) progress.note(`checkpoint: step ${step} saved to ${path}`); },
      onError: (e) => process.stderr.write(`wasmformer: warning: the checkpoint was not saved (training goes on): ${e.message}\n`),
    }),
    // a pipe whose reader left: as a process that SIGPIPE ends (128 + 13)
    exitCode: () => (stops.signal ? signalExitCode(stops.signal) : run.outputLost ? (run.outputLost.code === 'EPIPE' ? 141 : 1) : 0),
    // the run's last lines may fail after it (stdout's errors come late): quietly, leaving
    // the command's exit code alone
    dispose() { stops.dispose(); onOutputLost = () => {}; },
    /** Trains the run on (continueRun's `more`) with progress and checkpoints until it ends or
     * is stopped; returns {summary, failure} (a stop is neither), its last checkpoint settled. */
    async drive(more = {}) {
      let summary = null, failure = null;
      try {
        summary = await model.continueRun({ ...more, signal: ac.signal, onProgress: (p) => { progress.update(p); run.clock.tick(); } });
      } catch (e) {
        if (e.name !== 'AbortError') failure = e;
      } finally {
        progress.end();
      }
      await run.clock.settle(); // a checkpoint still being written must not land after the final save
      return { summary, failure };
    },
  };
  onOutputLost = (e) => {
    run.outputLost ??= e;
    ac.abort();
  };
  return run;
}

/** Seconds of a --time value: a number with its unit, s, m or h (a bare number is refused:
 * 5 could mean seconds or minutes, and a guess would train 60 times too long or too short). */
function timeBudget(value) {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value);
  if (!m || !(Number(m[1]) > 0)) throw new UsageError(`--time must be a duration such as 90s, 5m or 1.5h, not "${value}"`);
  if (!m[2]) throw new UsageError(`--time ${value} has no unit: write ${value}s, ${value}m or ${value}h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2]];
}

/** The identity of a training text, kept in the model file's metadata: a resumed run must
 * read the same tokens (the core checks them too: their count and CRC-32). */
function textIdentity(file, text) {
  return { file: basename(file), sha256: createHash('sha256').update(text).digest('hex'), chars: text.length };
}

/** The text a resumed model was trained on, checked against the one given (refused when it
 * differs, or is not given and the bundled novel is not it), and the saved run's settings
 * against the flags (refused when a flag says otherwise). Files of an older wasmformer keep
 * their text under metadata.run.text. */
function checkResume(model, path, argv, o, text) {
  const saved = model.metadata?.text ?? model.metadata?.run?.text;
  if (saved && typeof saved.sha256 === 'string') {
    const given = textIdentity(argv[0] ?? BUNDLED_TEXT, text);
    if (given.sha256 !== saved.sha256) {
      if (argv[0] === undefined) throw new UsageError(`${path} was trained on ${saved.file}: give that file to resume (wasmformer train ${saved.file} --out ${path} --resume)`);
      throw new UsageError(`${argv[0]} is not the text ${path} was trained on (${saved.file}, ${Number(saved.chars).toLocaleString('en-US')} characters, sha256 ${saved.sha256.slice(0, 12)}…); a resumed run must read the same text`);
    }
  }
  const run = model.run;
  if (!run) return;
  for (const [flag, key] of [['batch', 'batchSize'], ['eval-interval', 'evalInterval'], ['val-fraction', 'valFraction'], ['eval-mode', 'evalMode']]) {
    const given = flag === 'eval-mode' ? o[flag] : o[flag] === undefined ? undefined : Number(o[flag]);
    if (given !== undefined && given !== run[key]) throw new UsageError(`--${flag} ${o[flag]} differs from the run saved in ${path} (${run[key]}); a resumed run keeps it`);
  }
}

/** Where a run stands, in words: "step 60 of 60", "2s of 2s". */
function standing(model) {
  const r = model.run;
  return r.lastSeconds ? `${duration(r.seconds)} of ${duration(r.lastSeconds)}` : `step ${model.step} of ${model.step - r.steps + r.lastSteps}`;
}

/** Reads --steps, --time (with --resume: how much more) and the flags a new run takes. */
function runFlags(o) {
  const steps = o.steps === undefined ? undefined : integer('steps', o.steps, 1);
  const seconds = o.time === undefined ? undefined : timeBudget(o.time);
  if (steps !== undefined && seconds !== undefined) throw new UsageError('--steps and --time: give one (a run lasts steps or a time)');
  const evalMode = o['eval-mode'] ?? wf.TRAIN_DEFAULTS.evalMode;
  if (!['sample', 'windows'].includes(evalMode)) throw new UsageError(`--eval-mode must be sample or windows, not "${evalMode}"`);
  return {
    steps, seconds, evalMode,
    batchSize: o.batch === undefined ? undefined : integer('batch', o.batch, 1),
    lr: o.lr === undefined ? undefined : number('lr', o.lr, (x) => x > 0, 'a number > 0'),
    evalInterval: integer('eval-interval', o['eval-interval'] ?? String(wf.TRAIN_DEFAULTS.evalInterval), 0),
    valFraction: number('val-fraction', o['val-fraction'] ?? String(wf.TRAIN_DEFAULTS.valFraction), (x) => x >= 0 && x < 1, 'a number in [0, 1)'),
    seed: o.seed === undefined ? undefined : integer('seed', o.seed, 0),
  };
}

async function train(argv, o) {
  positionals('train', argv, 0, 1);
  const file = argv[0] ?? BUNDLED_TEXT;
  const path = o.out ?? 'model.wf';
  const f = runFlags(o);
  const modelFields = tableValues(MODEL_OPTIONS, o), optimFields = tableValues(OPTIM_OPTIONS, o);
  const every = checkpointEvery(o);
  if (o.tokenizer !== undefined && !['char', 'bpe'].includes(o.tokenizer)) throw new UsageError(`--tokenizer must be char or bpe, not "${o.tokenizer}"`);
  if (o.vocab !== undefined && o.tokenizer !== 'bpe') throw new UsageError('--vocab goes with --tokenizer bpe');
  const vocab = o.tokenizer === 'bpe' ? integer('vocab', o.vocab ?? '512', 257) : undefined;
  if (o.preset !== undefined && o.preset !== 'auto' && !wf.PRESETS[o.preset]) throw new UsageError(`--preset must be one of ${Object.keys(wf.PRESETS).join(', ')}, not "${o.preset}"`);
  let config = {};
  if (o.config !== undefined) {
    try { config = JSON.parse(o.config); } catch { config = null; }
    if (!config || typeof config !== 'object' || Array.isArray(config)) throw new UsageError(`--config must be a JSON object, not ${o.config}`);
  }
  for (const flag of ['preset', 'config', 'seed', 'tokenizer', ...Object.keys(MODEL_OPTIONS)]) {
    if (o.resume && o[flag] !== undefined) throw new UsageError(`--${flag} cannot be combined with --resume: the model's config comes from ${path}`);
  }
  if (o.resume && o.force) throw new UsageError('--resume and --force contradict each other');
  const text = readText(file); // the input first: a missing text is the problem, whatever --out holds
  if (!o.resume && !o.force && existsSync(path)) throw new UsageError(`${path} exists: add --resume to continue training it, or --force to replace it`);
  if (o.resume && !existsSync(path)) throw new UsageError(`nothing to resume: ${path} does not exist`);
  const tokenizer = vocab ? { kind: 'bpe', vocabSize: vocab } : 'char';
  let preset = o.preset ?? DEFAULT_PRESET;
  // --time without a preset or shape (or --preset auto): the preset expected to reach the lowest
  // held-out loss in that time on this machine (src/js/auto.js, docs/CLI.md)
  const shaped = o.config !== undefined || Object.keys(modelFields).length > 0;
  const auto = !o.resume && f.seconds && (o.preset === 'auto' || (o.preset === undefined && !shaped));
  if (o.preset === 'auto' && !auto) throw new UsageError('--preset auto goes with --time (a time budget)');
  const model = o.resume
    ? (await readModel(path)).model
    // the tokenizer is learned from the text first, and sizes the vocabulary unless --config does
    : await wf.createModel({ preset: auto ? 'auto' : preset, ...config, ...modelFields, ...(f.seed === undefined ? {} : { seed: f.seed }) },
      { text, tokenizer, ...(auto ? { seconds: f.seconds } : {}) });
  if (model.autoChoice) {
    preset = model.autoChoice.preset;
    console.error(`auto picked ${preset}: ${model.autoChoice.why}`);
  }
  try {
    return await trainRun(model, { argv, o, f, file, path, text, preset, optimFields, every });
  } finally {
    model.dispose();
  }
}

/**
 * Begins the run (or, with --resume, goes on with the saved one), drives it to its end or
 * the --steps / --time more asked for, with progress, the signals that stop it (saving its
 * steps) and checkpoints on a clock (keepRun), and says how it went. The run stays in the
 * file: --resume goes on with it exactly.
 */
async function trainRun(model, { argv, o, f, file, path, text, preset, optimFields, every }) {
  const start = model.step, saved = o.resume ? model.run : null;
  if (o.resume) checkResume(model, path, argv, o, text);
  const more = f.steps !== undefined ? { steps: f.steps } : f.seconds !== undefined ? { seconds: f.seconds } : {};
  if (saved?.finished && !f.steps && !f.seconds) {
    out.write(`${path} has finished its run (${standing(model)}): nothing to do; --steps N or --time T trains more\n`);
    return 0;
  }
  if (o.resume && !saved && !f.steps && !f.seconds) {
    throw new UsageError(`${path} holds no run to go on with (its run ended, or an older wasmformer wrote it): give --steps N or --time T`);
  }
  const common = {
    ...optimFields, ...(f.lr === undefined ? {} : { lr: f.lr }), onWarning: warn('train'),
    batchSize: f.batchSize ?? model.defaultBatchSize, evalInterval: f.evalInterval, valFraction: f.valFraction, evalMode: f.evalMode,
  };
  model.setMetadata({ ...(model.metadata ?? {}), run: undefined, text: textIdentity(file, text) });
  if (o.resume) {
    // the saved run goes on (its settings are its own); a file without one: a run on its schedule
    model.startRun(text, { ...(saved ? { ...optimFields, ...(f.lr === undefined ? {} : { lr: f.lr }), onWarning: warn('train') } : { ...common, ...more }), keepSchedule: true });
  } else {
    model.startRun(text, { ...common, ...(f.seconds ? { seconds: f.seconds } : { steps: f.steps ?? wf.PRESET_STEPS[preset] ?? wf.TRAIN_DEFAULTS.steps }),
      ...(f.seed === undefined ? {} : { seed: f.seed }) });
  }
  const run = model.run, B = run.batchSize, T = run.context;
  const progress = progressPrinter(!!out.isTTY, run.evalInterval, progressTarget(model, saved ? more : {}));
  const keep = await keepRun(model, path, every, progress);
  const goal = saved && (more.steps || more.seconds) ? (more.steps ? `for ${more.steps} more steps` : `for ${duration(more.seconds)} more of training`)
    : run.lastSeconds ? `for ${duration(run.lastSeconds - run.seconds)} of training` : `until step ${model.step - run.steps + run.lastSteps}`;
  const flags = Object.keys(MODEL_OPTIONS).filter((k) => o[k] !== undefined).map((k) => ` --${k} ${o[k]}`).join('');
  const name = o.resume ? `${path} (step ${start})` : `${preset}${o.config ? ` ${o.config}` : ''}${flags}`;
  out.write(`training ${name}, ${model.paramCount.toLocaleString('en-US')} parameters, on ${basename(file)} `
    + `(${text.length.toLocaleString('en-US')} characters) ${goal}, batches of ${B} x ${T} tokens; saving to ${path}`
    + `${every > 0 ? ` (a checkpoint every ${duration(every)})` : ''}\n`);
  let summary = null, failure = null;
  try {
    ({ summary, failure } = await keep.drive(saved ? more : {}));
    // every step taken is saved, with the run, whether it ended, was interrupted or failed; a
    // run that took none writes nothing (a failed start leaves no untrained model to trip
    // over), unless a checkpoint wrote steps that a divergence then rolled back: the file says so
    if (model.step > start || keep.clock.saved > 0) {
      await wf.saveModelFile(model, path);
      const size = megabytes(statSync(path).size);
      if (summary) {
        const val = await finalValidation(model, text, run.valFraction, summary);
        out.write(`done: step ${summary.step}, loss ${summary.loss.toFixed(3)}`
          + `${val ? `, val ${val.loss.toFixed(3)} (${val.bitsPerChar.toFixed(3)} bpc)` : ''}, ${rate(summary.tokensPerSecond)} tok/s, `
          + `${duration(summary.elapsed)}; saved ${path} (${size})\n`);
      } else {
        out.write(`${keep.signal || keep.outputLost ? 'interrupted' : 'stopped'} at step ${model.step}; saved ${path} (${size}). `
          + `Continue with: wasmformer train${argv[0] ? ` ${argv[0]}` : ''} --out ${path} --resume\n`);
      }
    }
  } finally {
    keep.dispose();
  }
  if (failure) throw failure;
  return keep.exitCode();
}

/** What a progress bar counts toward, from where it stands: the run's end, or the steps or
 * seconds more asked for. */
function progressTarget(model, more) {
  const r = model.run;
  if (more.steps) return { steps: model.step + more.steps, from: model.step };
  if (more.seconds) return { seconds: r.seconds + more.seconds, from: r.seconds };
  return r.lastSeconds ? { seconds: r.lastSeconds, from: r.seconds } : { steps: model.step - r.steps + r.lastSteps, from: model.step };
}

/** The run's final validation loss and bits per character over all of the held-out split
 * (the deterministic evaluation: consecutive windows, as `wasmformer eval`), the run's own
 * when it validated that way at its end; null without a split long enough for a window. */
async function finalValidation(model, text, valFraction, summary) {
  if (summary.valBpc !== null && summary.valLoss !== null) return { loss: summary.valLoss, bitsPerChar: summary.valBpc };
  const ids = model.tokenizer?.encode(text);
  const held = ids?.subarray(ids.length - Math.floor(ids.length * valFraction));
  if (!held || valFraction === 0 || held.length < model.config.context + 1) return null;
  return model.evaluate(held);
}

/** A model to fine-tune: a Hugging Face folder (config.json, model.safetensors and its
 * tokenizer: tokenizer.wft if present, else tokenizer.json) or a model file. */
async function openModel(path) {
  if (existsSync(path) && statSync(path).isDirectory()) {
    for (const name of ['config.json', 'model.safetensors']) {
      if (!existsSync(join(path, name))) throw new Error(`${path} has no ${name} (a model folder holds config.json and model.safetensors)`);
    }
    try {
      return await wf.importSafetensorsDir(path);
    } catch (e) {
      if (e instanceof wf.WfError) e.message = `${path}: ${e.message}`;
      throw e;
    }
  }
  return (await readModel(path)).model;
}

async function finetune(argv, o) {
  positionals('finetune', argv, 1, 2);
  const file = argv[1] ?? BUNDLED_TEXT, path = o.out ?? 'finetuned.wf';
  const rank = integer('lora-rank', o['lora-rank'] ?? '8', 0);
  for (const flag of ['lora-alpha', 'lora-targets', 'peft', 'merge']) {
    if (rank === 0 && o[flag] !== undefined) throw new UsageError(`--${flag} is about LoRA adapters: it needs --lora-rank > 0`);
  }
  const alpha = o['lora-alpha'] === undefined ? 2 * rank : number('lora-alpha', o['lora-alpha'], (x) => x > 0, 'a number > 0');
  const list = (v) => v.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const targets = list(o['lora-targets'] ?? 'all'), trainSpec = o.train === undefined ? undefined : list(o.train);
  const steps = integer('steps', o.steps ?? '500', 1), B = integer('batch', o.batch ?? '8', 1);
  const lr = number('lr', o.lr ?? '1e-3', (x) => x > 0, 'a number > 0');
  const evalInterval = integer('eval-interval', o['eval-interval'] ?? String(wf.TRAIN_DEFAULTS.evalInterval), 0);
  const valFraction = number('val-fraction', o['val-fraction'] ?? String(wf.TRAIN_DEFAULTS.valFraction), (x) => x >= 0 && x < 1, 'a number in [0, 1)');
  const seed = o.seed === undefined ? undefined : integer('seed', o.seed, 0);
  const every = checkpointEvery(o);
  // the inputs first: a missing model or text is the problem, whatever --out holds
  if (!existsSync(argv[0])) throw new Error(`cannot read ${argv[0]}: no such file or folder`);
  const text = readText(file);
  if (existsSync(path) && !o.force) throw new UsageError(`${path} exists: add --force to replace it (wasmformer train ${argv[1] ?? ''} --out ${path} --resume continues its run)`);
  const model = await openModel(argv[0]);
  const start = model.step;
  let summary = null, failure = null, run = null;
  try {
    if (!model.tokenizer) {
      throw new Error(`${argv[0]} has no tokenizer: a pretrained model reads its own token ids (a folder needs its tokenizer.json, or the tokenizer.wft wasmformer export writes)`);
    }
    if (model.lora) throw new UsageError(`${argv[0]} has LoRA adapters already: wasmformer train ${argv[1] ?? ''} --out ${argv[0]} --resume continues their run`);
    const fullState = model.memory().params * 4; // weights, gradients and both moments: 4x the weights
    const quantize = quantizeFlag(o.quantize);
    if (quantize !== undefined) {
      if (rank === 0) throw new UsageError('--quantize freezes the base: it goes with LoRA adapters (--lora-rank > 0)');
      if (o.merge) throw new UsageError('--merge cannot fold adapters into quantized weights: leave out --merge (or --quantize)');
      model.quantize(quantize);
    }
    if (rank > 0) model.addLora({ rank, alpha, targets });
    if (trainSpec) rank > 0 ? model.unfreeze(trainSpec) : model.trainOnly(trainSpec);
    const { trainable, total } = model.trainable(), mem = model.memory();
    const what = rank > 0 ? `LoRA rank ${rank} (alpha ${alpha}) on ${model.lora.targets.join(', ')}${trainSpec ? ` and ${trainSpec.join(', ')}` : ''}`
      : `${trainSpec ? trainSpec.join(', ') : 'every weight'}`;
    // an adapter file this model cannot have is known now, not after the training: the same
    // export, of the untrained adapters
    if (o.peft !== undefined) {
      try {
        model.exportPeft();
      } catch (e) {
        if (e instanceof wf.WfError) e.message = `--peft: ${e.message}; nothing was trained`;
        throw e;
      }
    }
    model.setMetadata({ ...(model.metadata ?? {}), run: undefined, text: textIdentity(file, text) });
    // a run, kept in the file: train --resume goes on with it
    model.startRun(text, { steps, batchSize: B, lr, evalInterval, valFraction, onWarning: warn('finetune'), ...(seed === undefined ? {} : { seed }) });
    // this run's own steps (a model file counts the steps it was trained with before)
    const progress = progressPrinter(!!out.isTTY, evalInterval, progressTarget(model, {}), { local: true });
    run = await keepRun(model, path, every, progress);
    const state = model.memory(); // with the gradients and moments the run has just made
    out.write(`fine-tuning ${argv[0]} on ${basename(file)} (${text.length.toLocaleString('en-US')} characters): ${what}; ` +
      `${trainable.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} parameters train (${(100 * trainable / total).toFixed(2)} %), ` +
      `training state ${megabytes(state.params + state.grads + state.optimizer)} (every weight: ${megabytes(fullState)}); ${steps} steps of ${B} x ${model.config.context} tokens; saving to ${path}` +
      `${every > 0 ? ` (a checkpoint every ${duration(every)})` : ''}
`);
    ({ summary, failure } = await run.drive());
    // every step taken is saved, whatever happens to the adapter files (written first: --merge
    // folds the adapters away); so is a run rolled back after a checkpoint (the file must not
    // keep undone steps)
    if (model.step > start || run.clock.saved > 0) {
      let names = null, peftError = null;
      if (o.peft !== undefined) {
        try {
          names = await wf.exportPeftDir(model, o.peft);
        } catch (e) {
          peftError = e;
        }
      }
      if (o.merge) model.mergeLora();
      await wf.saveModelFile(model, path);
      const size = megabytes(statSync(path).size);
      const done = summary?.steps ?? model.step - start;
      out.write(summary ? `done: ${done} steps (the model's step ${summary.step}), loss ${summary.loss.toFixed(3)}${summary.valLoss === null ? '' : `, val ${summary.valLoss.toFixed(3)}`}, ` +
        `${rate(summary.tokensPerSecond)} tok/s, ${duration(summary.elapsed)}; saved ${path} (${size}${o.merge ? ', adapters merged' : ''})\n`
        : `${failure ? 'stopped' : 'interrupted'} after ${done} steps (the model's step ${model.step}); saved ${path} (${size})\n`);
      if (names) {
        const folder = statSync(argv[0]).isDirectory();
        out.write(`wrote ${names.map((n) => join(o.peft, n)).join(', ')} (their base: ${folder ? argv[0] : `wasmformer export ${argv[0]} --out DIR`})\n`);
      }
      if (peftError) {
        peftError.message = `--peft ${o.peft}: ${peftError.message} (${path} is saved)`;
        failure ??= peftError;
      }
    }
  } finally {
    model.dispose();
    run?.dispose();
  }
  if (failure) throw failure;
  return run.exitCode();
}

async function generate(argv, o) {
  positionals('generate', argv, 1, 1);
  const opts = {
    maxTokens: integer('tokens', o.tokens ?? String(wf.GENERATE_DEFAULTS.maxTokens), 0),
    temperature: number('temperature', o.temperature ?? String(wf.GENERATE_DEFAULTS.temperature), (x) => x >= 0, 'a number >= 0'),
    topK: integer('top-k', o['top-k'] ?? '0', 0),
    topP: number('top-p', o['top-p'] ?? '1', (x) => x > 0 && x <= 1, 'a number in (0, 1]'),
    stop: (o.stop ?? []).map((s) => s.replace(/\\n/g, '\n').replace(/\\t/g, '\t')),
    allowUnknown: o['allow-unknown'] ?? false,
    onWarning: warn('generate'),
  };
  if (o.seed !== undefined) opts.seed = integer('seed', o.seed, 0);
  const prompt = (o.prompt ?? '').replace(/\\n/g, '\n');
  const { model } = await readModel(argv[0]);
  const ac = new AbortController();
  let interrupted = false;
  const onSigint = () => { interrupted = true; ac.abort(); };
  process.on('SIGINT', onSigint);
  out.write(prompt);
  try {
    for await (const piece of model.generate(prompt, { ...opts, signal: ac.signal })) out.write(piece);
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  } finally {
    out.write('\n');
    process.off('SIGINT', onSigint);
    model.dispose();
  }
  return interrupted ? 130 : 0;
}

async function evaluate(argv, o) {
  positionals('eval', argv, 2, 2);
  const maxTokens = o['max-tokens'] === undefined ? Infinity : integer('max-tokens', o['max-tokens'], 1);
  const text = readText(argv[1]);
  const { model } = await readModel(argv[0]);
  try {
    const r = await model.evaluate(text, { maxTokens, onWarning: warn('eval') });
    if (o.json) out.write(`${JSON.stringify(r)}\n`);
    else out.write(`loss ${r.loss.toFixed(4)}  perplexity ${r.perplexity.toFixed(3)}  (${r.tokens.toLocaleString('en-US')} tokens of ${basename(argv[1])})\n`);
  } finally {
    model.dispose();
  }
  return 0;
}

/** Reads a model file; a file that is not a checkpoint says so in one line. */
async function readModel(path) {
  let data;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
  try {
    return { model: await wf.loadModel(data), data };
  } catch (e) {
    if (e instanceof wf.WfError) e.message = `${path}: ${e.message}`;
    throw e;
  }
}

async function info(argv, o) {
  positionals('info', argv, 1, 1);
  const { model, data } = await readModel(argv[0]);
  try {
    const i = model.info();
    const resumable = i.optimizerState;
    if (o.json) {
      out.write(`${JSON.stringify({ file: argv[0], bytes: data.length, resumable, ...i }, null, 2)}\n`);
      return 0;
    }
    const c = i.config, opt = i.optimizer;
    const warmupEnd = opt.start + opt.warmup;
    // a run's schedule is the run's (a time budget's follows its clock); else the settings'
    const schedule = i.run?.lastSeconds ? `next lr ${i.lr.toPrecision(3)}, on its run's ${duration(i.run.lastSeconds)} budget`
      : `lr ${opt.lr.toPrecision(3)}, warmup to step ${warmupEnd}`
        + (opt.decaySteps > 0 ? `, cosine decay to step ${warmupEnd + opt.decaySteps}` : ', then constant')
        + (i.lr !== opt.lr ? `; next lr ${i.lr.toPrecision(3)}` : '');
    const rows = [
      ['file', `${argv[0]} (${megabytes(data.length)})`],
      ['model', `${c.arch}, ${c.block === 'pre_ln' ? 'Pre-LN' : 'Post-LN'} ${c.norm}, ${c.activation}, ${c.positions} positions, ` +
        `${c.tiedHead ? 'tied' : 'untied'} head, ${c.bias ? 'with' : 'no'} biases`],
      ['shape', `${c.nLayer} layers, ${c.nHead} heads, d_model ${c.dModel}, d_ff ${c.dFF}, context ${c.context}, vocab ${c.vocabSize}`],
      ['parameters', i.paramCount.toLocaleString('en-US')],
      ['trained', resumable ? `${i.step} steps (${schedule}); optimizer state saved, training can resume`
        : 'weights only (no optimizer state: the step count and schedule were not saved)'],
      ...(i.run ? [['run', `${i.run.lastSeconds ? `${duration(i.run.seconds)} of ${duration(i.run.lastSeconds)}` : `${i.run.steps} of ${i.run.lastSteps} steps`}`
        + `, ${i.run.finished ? 'finished' : 'train --resume goes on with it'}; batches of ${i.run.batchSize} x ${i.run.context}`]] : []),
      ['tokenizer', i.tokenizer ? `${i.tokenizer.kind}, ${i.tokenizer.vocabSize} tokens` : 'none'],
      ['weights', weightsText(model)],
      ['memory', `${megabytes(i.memory.total)} in use (weights ${megabytes(i.memory.params)})`],
    ];
    for (const [k, v] of rows) out.write(`${k.padEnd(11)} ${v}\n`);
  } finally {
    model.dispose();
  }
  return 0;
}

async function exportModel(argv, o) {
  positionals('export', argv, 1, 1);
  const format = o.format ?? 'safetensors';
  if (format !== 'safetensors' && format !== 'gguf') throw new UsageError(`--format must be safetensors or gguf, not "${format}"`);
  if (o.out === undefined) throw new UsageError(`--out ${format === 'gguf' ? 'FILE' : 'DIR'} is required`);
  const quantize = quantizeFlag(o.quantize);
  if (quantize !== undefined && format !== 'gguf') throw new UsageError('--quantize goes with --format gguf (safetensors hold float32)');
  const { model } = await readModel(argv[0]);
  try {
    if (o.merge && !model.lora) throw new UsageError(`--merge: ${argv[0]} has no LoRA adapters`);
    if (o.merge) model.mergeLora();
    if (format === 'gguf') {
      if (quantize !== undefined) model.quantize(quantize);
      const bytes = await wf.saveModelFile(model, o.out, { format: 'gguf' });
      out.write(`wrote ${o.out} (${megabytes(bytes)}, ${weightsText(model)})\n`);
      return 0;
    }
    const names = await wf.exportSafetensorsDir(model, o.out).catch((e) => {
      if (model.lora && e.code === 'WF_ERR_STATE') e.message += ' (--merge folds them in)';
      throw e;
    });
    out.write(`wrote ${names.map((n) => join(o.out, n)).join(', ')}\n`);
  } finally {
    model.dispose();
  }
  return 0;
}

/** --quantize's value, checked (undefined: not given). */
function quantizeFlag(value) {
  if (value !== undefined && !['q8_0', 'q4_0', 'f32'].includes(value)) throw new UsageError(`--quantize must be q8_0, q4_0 or f32, not "${value}"`);
  return value;
}

/** How a model's weights are stored, in a few words: "f32 weights, 513.6 MB". */
function weightsText(model) {
  const q = model.quantization;
  return `${q === 'f32' ? 'float32' : q === 'mixed' ? 'mixed Q8_0/Q4_0/float32' : q.toUpperCase()} weights, ${megabytes(model.memory().params)}`;
}

async function importModel(argv, o) {
  positionals('import', argv, 1, 1);
  if (o.out === undefined) throw new UsageError('--out FILE is required');
  if (existsSync(o.out) && !o.force) throw new UsageError(`${o.out} exists: add --force to replace it`);
  if (!existsSync(argv[0])) throw new Error(`${argv[0]} does not exist`);
  const dir = statSync(argv[0]).isDirectory();
  if (dir) {
    if (o.tokenizer !== undefined) throw new UsageError('--tokenizer goes with a llama2.c model file; a folder brings its own tokenizer.json');
    for (const name of ['config.json', 'model.safetensors']) {
      if (!existsSync(join(argv[0], name))) throw new Error(`${argv[0]} has no ${name}`);
    }
  }
  const tokenizer = o.tokenizer === undefined ? undefined : readFileSync(o.tokenizer);
  const quantize = quantizeFlag(o.quantize);
  let model;
  try {
    const bytes = dir ? null : readFileSync(argv[0]);
    const gguf = bytes && bytes.length >= 4 && bytes.toString('latin1', 0, 4) === 'GGUF';
    if (gguf && tokenizer !== undefined) throw new UsageError('--tokenizer goes with a llama2.c model file; a GGUF file brings its own');
    model = dir ? await wf.importSafetensorsDir(argv[0], { quantize }) : gguf ? await wf.loadModel(bytes, { quantize })
      : await wf.importLlama2c(bytes, tokenizer === undefined ? { quantize } : { tokenizer, quantize });
  } catch (e) {
    if (e instanceof wf.WfError) e.message = `${argv[0]}: ${e.message}`;
    throw e;
  }
  try {
    await wf.saveModelFile(model, o.out);
    const c = model.config;
    out.write(`wrote ${o.out}: ${c.arch}, ${c.nLayer} layers, d_model ${c.dModel}, ${model.paramCount.toLocaleString('en-US')} parameters` +
      ` (${weightsText(model)}), ${model.tokenizer ? `${model.tokenizer.kind} tokenizer` : 'no tokenizer (token ids only)'}\n`);
  } finally {
    model.dispose();
  }
  return 0;
}

// ---- main ----

async function main(argv) {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(mainHelp());
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    out.write(mainHelp());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    out.write(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(COMMANDS).join(', ')}`);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
  } catch (e) {
    // parseArgs explains at length; its first sentence is the one-line error
    let message = e.message.split(/\.\s/)[0].replace(/^./, (ch) => ch.toLowerCase());
    const option = message.match(/'(?:-\w, )?(--[\w-]+)' argument is ambiguous/)?.[1];
    if (option) message += `: write ${option}=VALUE for a value that starts with a dash`;
    // a misspelled flag names the one it meant, as a misspelled key does in the package; a
    // shortened one (--temp) the one flag it begins
    const unknown = message.match(/^unknown option '--([^'=]+)'/)?.[1];
    const begun = unknown ? Object.keys(command.options).filter((f) => f.startsWith(unknown)) : [];
    const near = unknown && (nearest(unknown, Object.keys(command.options)) ?? (begun.length === 1 ? begun[0] : null));
    if (near) message += `; did you mean --${near}?`;
    throw new UsageError(message);
  }
  if (parsed.values.help) {
    out.write(commandHelp(name));
    return 0;
  }
  return command.run(parsed.positionals, parsed.values);
}

// stdout closed early (e.g. piped into head): stop quietly, or, during a training run, stop
// the run as a signal would (keepRun), so that its steps are saved first
let onOutputLost = null;
out.on('error', (e) => (onOutputLost ? onOutputLost(e) : process.exit(e.code === 'EPIPE' ? 0 : 1)));

// The package's messages name its option keys (valFraction, gradClip); on the command line
// they are the command's flags: a key whose kebab-case is one of them, or one the command
// sets under another name (--batch, generate's --tokens). Quoted words stay (a key of the
// --config JSON), and so does a message about unknown keys, which are the JSON's.
const FLAG_ALIASES = { train: { batchSize: 'batch' }, finetune: { batchSize: 'batch' }, generate: { maxTokens: 'tokens' } };
function inFlags(message, command) {
  const options = COMMANDS[command]?.options;
  if (!options || message.startsWith('unknown key')) return message;
  return message.replace(/"[^"]*"|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b/g, (word) => {
    if (word.startsWith('"')) return word;
    const flag = FLAG_ALIASES[command]?.[word] ?? kebab(word);
    return Object.hasOwn(options, flag) ? `--${flag}` : word;
  });
}

const argv = process.argv.slice(2);
main(argv).then((code) => { process.exitCode = code; }, (e) => {
  const command = COMMANDS[argv[0]] ? `wasmformer ${argv[0]}` : 'wasmformer';
  if (e instanceof UsageError) {
    process.stderr.write(`${command}: ${e.message} (see ${command} --help)\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`${command}: ${inFlags(e.message, argv[0])}\n`);
    process.exitCode = 1;
  }
});
