export { hello } from './hello.js';
