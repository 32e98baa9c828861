import t from 'tap'
import { issuerMismatch } from '../../src/start/issuer-mismatch.js'

const TAIL = ': discovery metadata and token iss advertise the configured issuer; set issuer.issuer to the address clients use'

t.test('an http issuer on a TLS listener is named, as is an https one on a plain listener', async (t) => {
  t.equal(issuerMismatch('http://localhost:8080', '127.0.0.1', 8080, true),
    `issuer.issuer (http://localhost:8080) is http but the gateway's listener speaks HTTPS only (server.tls)${TAIL}`)
  t.equal(issuerMismatch('https://localhost:8080', '127.0.0.1', 8080, false),
    `issuer.issuer (https://localhost:8080) is https but the gateway's listener speaks plain HTTP (no server.tls)${TAIL}`)
  t.equal(issuerMismatch('http://localhost:8080', '127.0.0.1', 8443, true),
    `issuer.issuer (http://localhost:8080) names port 8080 but the gateway listens on 8443, and is http but the gateway's listener speaks HTTPS only (server.tls)${TAIL}`)
})

t.test('a matching issuer, or one on another host (a proxy in front), is not', async (t) => {
  t.equal(issuerMismatch('https://localhost:8080', '127.0.0.1', 8080, true), undefined)
  t.equal(issuerMismatch('http://localhost:8080', '127.0.0.1', 8080, false), undefined)
  t.equal(issuerMismatch('http://api.example.com', '127.0.0.1', 8080, true), undefined)
  t.equal(issuerMismatch('https://localhost', '127.0.0.1', 443, true), undefined)
})
