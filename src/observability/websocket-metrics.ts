import { Gauge, type Registry } from 'prom-client'
import { asPromMetric, CounterFamily, type CounterCell } from './series.js'

/**
 * The WebSocket series: `lanegate_websocket_connections{service,route}` (open now),
 * `lanegate_websocket_messages_total{service,route,direction}` (`in`: caller → upstream, `out`: back) and
 * `lanegate_websocket_closes_total{code}` (the code that ended the caller's side). Labels are bounded: service and
 * route ids from gateway.yaml, close codes. A message costs an addition: each connection finds its cells once.
 */
export class WebSocketMetrics {
  readonly messages = new CounterFamily('lanegate_websocket_messages_total', 'WebSocket messages relayed, by service, route id and direction (in: from the caller, out: to the caller).', ['service', 'route', 'direction'])
  readonly closes = new CounterFamily('lanegate_websocket_closes_total', 'WebSocket connections ended, by the close code of the caller\'s side.', ['code'])
  readonly connections: Gauge

  constructor (registry: Registry) {
    registry.registerMetric(asPromMetric(this.messages))
    registry.registerMetric(asPromMetric(this.closes))
    this.connections = new Gauge({
      name: 'lanegate_websocket_connections',
      help: 'WebSocket connections open now, by service and route id.',
      labelNames: ['service', 'route'],
      registers: [registry],
      aggregator: 'sum',
    })
  }

  opened (service: string, route: string): void {
    this.connections.inc({ service, route })
  }

  messageCount (service: string, route: string, direction: 'in' | 'out'): CounterCell {
    return this.messages.cell(service, route, direction)
  }

  closed (service: string, route: string, code: number): void {
    this.connections.dec({ service, route })
    this.closes.inc(String(code))
  }
}
