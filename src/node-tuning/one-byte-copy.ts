/**
 * A flat copy of `text`, stored one byte per character by V8 whenever every character fits in one. A string cut
 * from gateway.yaml is a slice of the file's whole text, which V8 stores two bytes per character as soon as one
 * character of the file does not fit in one (a "—" in a comment), and so is every string built from such slices.
 * Writing one as UTF-8 (a response body) or measuring it (its Content-Length) then takes V8's two-byte path, over
 * the whole body it is part of. `split('')` and `join('')` copy the UTF-16 units as they are, lone surrogates too.
 * For values built once and sent many times (the token endpoint's scope, in each client's template).
 */
export function oneByteCopy (text: string): string {
  return text.split('').join('')
}
