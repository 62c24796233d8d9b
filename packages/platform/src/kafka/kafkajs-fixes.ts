// The former entry point of the kafkajs corrections, kept for the benchmark harness (tools/bench
// imports it before it imports kafkajs itself). Everything else imports kafkajs/index.ts, which
// installs every correction; this module only loads it.
import '../kafkajs/index.js';
