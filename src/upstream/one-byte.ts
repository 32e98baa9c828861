/**
 * `text` stored one byte per character, when every character fits in one (latin1). V8 stores a string sliced from
 * a text that holds any wider character (gateway.yaml's comments have dashes and ellipses) two bytes per character,
 * and so every string built from it: a request head built with such a credential is flattened two bytes per
 * character, then narrowed again as it is written to the socket (docs/performance.md).
 */
export function oneByte (text: string): string {
  return LATIN1.test(text) ? Buffer.from(text, 'latin1').toString('latin1') : text
}

const LATIN1 = /^[\u0000-\u00ff]*$/
