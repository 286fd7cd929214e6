import 'wasmformer/worker';
