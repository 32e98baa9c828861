/** An HTTP answer, its body read and parsed (JSON when it parses, else the text; `undefined` when empty). */
export interface Answer {
  status: number
  headers: Headers
  body: unknown
  /**
   * An earlier attempt of this call failed with a 5xx or no answer and was resent: the gateway may have acted on
   * it (an idempotent request is resent only because that is harmless).
   */
  resent: boolean
}

/** Reads and parses a fetch Response's body. */
export async function readAnswer (response: Response): Promise<Answer> {
  const text = await response.text()
  let body: unknown = text === '' ? undefined : text
  if (text !== '' && (response.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text)
    } catch {
      // Not JSON after all: keep the text.
    }
  }
  return { status: response.status, headers: response.headers, body, resent: false }
}

/** The gateway's request id, as an optional property. */
export function requestIdOf (headers: Headers): { requestId?: string } {
  const id = headers.get('x-request-id')
  return id === null ? {} : { requestId: id }
}
