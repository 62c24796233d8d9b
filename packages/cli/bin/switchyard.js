#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (npm run build first when working from source).
import '../dist/main.js';
