// agrun's session stores, from one path beside agrun.js (the modules live in ./storage/).
export * from './storage/index.js';
