import { run } from './cli.js';

// The `filing-compliance` executable (bin/filing-compliance.js loads the compiled copy of this file).
await run();
