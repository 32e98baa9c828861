// Module resolution hooks (node:module register) for test/e2e/lanegate-client-import.test.ts: any file module outside
// `dist/src/client/`, and so any package (fastify, pg, better-sqlite3, ioredis, undici, …) or server file, fails
// the import that asked for it, naming what was asked. Node's built-in modules are allowed.
interface Resolved { url: string }
type NextResolve = (specifier: string, context: unknown) => Promise<Resolved>

export async function resolve (specifier: string, context: { parentURL?: string }, next: NextResolve): Promise<Resolved> {
  const result = await next(specifier, context)
  // The program itself (`node -e`) may import anything; what it imports may not.
  const isEntry = context.parentURL === undefined || !context.parentURL.startsWith('file:') || /\[eval\d*\]$/.test(context.parentURL)
  if (result.url.startsWith('file:') && !isEntry && !result.url.includes('/dist/src/client/')) {
    throw new Error(`import guard: ${context.parentURL ?? '?'} imports ${specifier} (${result.url})`)
  }
  return result
}
