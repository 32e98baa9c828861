import http from 'node:http'
import https from 'node:https'
import type { LaneConfig } from '../../config/types.js'

interface AgentEntry {
  fingerprint: string
  agent: http.Agent
}

/**
 * One keep-alive agent per store lane, built on first use and reused; its `maxSockets` is the lane's concurrency
 * cap, so a hung lane fills only its own sockets and other lanes are unaffected (F10). When a reload changes a
 * lane's URL or socket cap the agent is replaced: requests in flight finish on the old one, whose sockets are
 * closed as soon as they go idle.
 */
export class LaneAgents {
  private readonly entries = new Map<string, AgentEntry>()
  private readonly retired = new Set<http.Agent>()

  /** The agent for a store's lane, replaced when its configuration changed. */
  get (storeId: string, lane: LaneConfig): http.Agent {
    const fingerprint = `${lane.base_url}|${lane.max_sockets}`
    const entry = this.entries.get(storeId)
    if (entry !== undefined && entry.fingerprint === fingerprint) return entry.agent
    if (entry !== undefined) this.retire(entry.agent)
    // Every socket the cap allows may stay open while idle: a smaller free pool closes sockets under load only
    // to reopen them a moment later (connect + close per request, measured as 1 new connection in 4 requests).
    // LIFO hands out the most recently used socket, so a quiet lane keeps few warm sockets and the rest age out.
    const options: http.AgentOptions = {
      keepAlive: true,
      maxSockets: lane.max_sockets,
      maxFreeSockets: lane.max_sockets,
      scheduling: 'lifo',
    }
    const agent = lane.base_url.startsWith('https:') ? new https.Agent(options) : new http.Agent(options)
    this.entries.set(storeId, { fingerprint, agent })
    return agent
  }

  private retire (agent: http.Agent): void {
    this.retired.add(agent)
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy()
    agent.on('free', function closeRetiredSocket (socket) { socket.destroy() })
  }

  /** Closes every socket of every agent (service shutdown). */
  close (): void {
    for (const { agent } of this.entries.values()) agent.destroy()
    for (const agent of this.retired) agent.destroy()
    this.entries.clear()
    this.retired.clear()
  }
}
