// `node --import <this file>`: installs the import guard (hooks.ts) before the program's first import.
import { register } from 'node:module'

register('./hooks.js', import.meta.url)
