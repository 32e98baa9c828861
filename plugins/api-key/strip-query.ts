/**
 * `url` without every occurrence of the query parameter `name` (compared after form-decoding, so `api%5Fkey` is
 * removed too); the other parameters keep their bytes exactly as sent, so what the upstream receives is otherwise
 * the caller's URL. A parameter whose name does not decode is kept (it cannot be `name`).
 */
export function removeQueryParameter (url: string, name: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const kept = url.slice(q + 1).split('&').filter(function notTheKey (part) {
    const eq = part.indexOf('=')
    const raw = (eq === -1 ? part : part.slice(0, eq)).replaceAll('+', ' ')
    try {
      return decodeURIComponent(raw) !== name
    } catch {
      return true
    }
  })
  return kept.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join('&')}`
}
