import pg from 'pg'
import { CONFIG_CHANNEL } from './config-store.js'

/**
 * A LISTEN connection of its own for the store's push notifications. When it drops, the next `ensure` opens another
 * (the caller reads the head it missed).
 */
export class PushListener {
  private client: pg.Client | undefined

  constructor (private readonly url: string, private readonly onPush: () => void) {}

  /** Listening after it resolves; a connection already up is kept. */
  async ensure (): Promise<void> {
    if (this.client !== undefined) return
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 3000 })
    const drop = (): void => {
      if (this.client === client) this.client = undefined
      client.end().catch(() => {})
    }
    client.on('error', drop)
    client.on('end', drop)
    client.on('notification', this.onPush)
    try {
      await client.connect()
      await client.query(`LISTEN ${CONFIG_CHANNEL}`)
    } catch (error) {
      client.end().catch(() => {})
      throw error
    }
    this.client = client
  }

  async close (): Promise<void> {
    await this.client?.end().catch(() => {})
  }
}
