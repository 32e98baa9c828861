import { connect, createServer, type AddressInfo, type Socket } from 'node:net'

/** One TLS record the server sent: its content type (23 = application data) and length. */
export interface TlsRecord { type: number, length: number }

export interface TlsRecordRelay {
  /** The relay's port: clients connect here instead of the server's. */
  port: number
  /** Every record the server sent through the relay so far, in order (all connections). */
  records: () => TlsRecord[]
  close: () => Promise<void>
}

/**
 * A TCP relay in front of a TLS server that splits what the server sends into TLS records (5-byte header: type,
 * version, length) without decrypting anything: how many records a response takes is seen on the wire.
 */
export async function startTlsRecordRelay (serverPort: number): Promise<TlsRecordRelay> {
  const records: TlsRecord[] = []
  const sockets = new Set<Socket>()
  const relay = createServer((client) => {
    const upstream = connect(serverPort, '127.0.0.1')
    sockets.add(client).add(upstream)
    let pending = Buffer.alloc(0)
    client.pipe(upstream)
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
        records.push({ type: pending[0] as number, length: pending.readUInt16BE(3) })
        pending = pending.subarray(5 + pending.readUInt16BE(3))
      }
      client.write(chunk)
    })
    upstream.on('end', () => client.end())
    const close = (): void => { client.destroy(); upstream.destroy() }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  return {
    port: (relay.address() as AddressInfo).port,
    records: () => [...records],
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => relay.close(resolve))
    },
  }
}
