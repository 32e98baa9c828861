import { createHash } from 'node:crypto'

/** A strong ETag over the exact response bytes. */
export function strongEtag (body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`
}

/**
 * RFC 9110 §13.1.2: If-None-Match uses weak comparison, so `W/"x"` matches `"x"`; `*` matches any current
 * representation.
 */
export function noneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  const opaque = etag.replace(/^W\//, '')
  return header.split(',').some((candidate) => {
    const tag = candidate.trim()
    return tag === '*' || tag.replace(/^W\//, '') === opaque
  })
}
