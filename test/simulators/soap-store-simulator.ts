import http from 'node:http'
import type { AddressInfo } from 'node:net'
import soap from 'soap'

/**
 * A legacy store system that speaks only SOAP: a real SOAP service built with the `soap` package from a WSDL with
 * two operations, `GetItem` (an item's name, price and stock) and `ReserveStock` (answers a Fault when the stock is
 * short or the item unknown). SOAP 1.1 (binding `soap`, `text/xml`, SOAPAction) or SOAP 1.2 (binding `soap12`,
 * `application/soap+xml`). The demo's SOAP lane (docs/walkthrough-soap.md) and the transform tests run it.
 */

export const STORE_NS = 'urn:lanegate:demo:store'

export interface SoapStoreItem { sku: string, name: string, price: string, stock: number }

export interface SoapStoreSimulator {
  url: string
  port: number
  version: '1.1' | '1.2'
  /** The raw requests received (headers and body), in order. */
  seen: Array<{ headers: http.IncomingHttpHeaders, body: string }>
  close (): Promise<void>
}

export function demoItems (): Map<string, SoapStoreItem> {
  return new Map([
    ['sku-100', { sku: 'sku-100', name: 'Sourdough loaf', price: '4.20', stock: 12 }],
    ['sku-200', { sku: 'sku-200', name: 'Oat milk 1L', price: '2.35', stock: 3 }],
  ])
}

function wsdl (version: '1.1' | '1.2'): string {
  const binding = version === '1.1' ? 'soap' : 'soap12'
  const bindingNs = version === '1.1' ? 'http://schemas.xmlsoap.org/wsdl/soap/' : 'http://schemas.xmlsoap.org/wsdl/soap12/'
  const operation = (name: string) => `
    <wsdl:operation name="${name}">
      <${binding}:operation soapAction="${STORE_NS}#${name}" style="document"/>
      <wsdl:input><${binding}:body use="literal"/></wsdl:input>
      <wsdl:output><${binding}:body use="literal"/></wsdl:output>
    </wsdl:operation>`
  return `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="StoreService" targetNamespace="${STORE_NS}" xmlns:tns="${STORE_NS}"
  xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:${binding}="${bindingNs}" xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <wsdl:types>
    <xsd:schema targetNamespace="${STORE_NS}" elementFormDefault="unqualified">
      <xsd:element name="GetItem"><xsd:complexType><xsd:sequence><xsd:element name="sku" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
      <xsd:element name="GetItemResponse"><xsd:complexType><xsd:sequence>
        <xsd:element name="sku" type="xsd:string"/><xsd:element name="name" type="xsd:string"/>
        <xsd:element name="price" type="xsd:string"/><xsd:element name="stock" type="xsd:int"/>
      </xsd:sequence></xsd:complexType></xsd:element>
      <xsd:element name="ReserveStock"><xsd:complexType><xsd:sequence>
        <xsd:element name="sku" type="xsd:string"/><xsd:element name="quantity" type="xsd:int"/>
      </xsd:sequence></xsd:complexType></xsd:element>
      <xsd:element name="ReserveStockResponse"><xsd:complexType><xsd:sequence>
        <xsd:element name="reservation" type="xsd:string"/><xsd:element name="left" type="xsd:int"/>
      </xsd:sequence></xsd:complexType></xsd:element>
    </xsd:schema>
  </wsdl:types>
  <wsdl:message name="GetItemIn"><wsdl:part name="parameters" element="tns:GetItem"/></wsdl:message>
  <wsdl:message name="GetItemOut"><wsdl:part name="parameters" element="tns:GetItemResponse"/></wsdl:message>
  <wsdl:message name="ReserveStockIn"><wsdl:part name="parameters" element="tns:ReserveStock"/></wsdl:message>
  <wsdl:message name="ReserveStockOut"><wsdl:part name="parameters" element="tns:ReserveStockResponse"/></wsdl:message>
  <wsdl:portType name="StorePortType">
    <wsdl:operation name="GetItem"><wsdl:input message="tns:GetItemIn"/><wsdl:output message="tns:GetItemOut"/></wsdl:operation>
    <wsdl:operation name="ReserveStock"><wsdl:input message="tns:ReserveStockIn"/><wsdl:output message="tns:ReserveStockOut"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="StoreBinding" type="tns:StorePortType">
    <${binding}:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>${operation('GetItem')}${operation('ReserveStock')}
  </wsdl:binding>
  <wsdl:service name="StoreService">
    <wsdl:port name="StorePort" binding="tns:StoreBinding"><${binding}:address location="http://localhost/store"/></wsdl:port>
  </wsdl:service>
</wsdl:definitions>`
}

/** A SOAP Fault in the version's shape; the `soap` package answers it with HTTP 500. */
function fault (version: '1.1' | '1.2', client: boolean, text: string): { Fault: Record<string, unknown> } {
  if (version === '1.1') return { Fault: { faultcode: client ? 'soap:Client' : 'soap:Server', faultstring: text, statusCode: 500 } }
  return { Fault: { Code: { Value: client ? 'soap:Sender' : 'soap:Receiver' }, Reason: { Text: text }, statusCode: 500 } }
}

export async function startSoapStoreSimulator (options: { version: '1.1' | '1.2', port?: number, host?: string, items?: Map<string, SoapStoreItem> }): Promise<SoapStoreSimulator> {
  const { version } = options
  const items = options.items ?? demoItems()
  const seen: SoapStoreSimulator['seen'] = []
  let reservations = 0
  const server = http.createServer()
  const services = {
    StoreService: {
      StorePort: {
        GetItem (args: { sku: string }) {
          const item = items.get(args.sku)
          if (item === undefined) throw fault(version, true, `Unknown item ${args.sku}`)
          return { sku: item.sku, name: item.name, price: item.price, stock: item.stock }
        },
        ReserveStock (args: { sku: string, quantity: number | string }) {
          const item = items.get(args.sku)
          const quantity = Number(args.quantity)
          if (item === undefined) throw fault(version, true, `Unknown item ${args.sku}`)
          if (!(quantity > 0) || quantity > item.stock) throw fault(version, true, `Not enough stock of ${args.sku}: ${item.stock} left, ${args.quantity} asked`)
          item.stock -= quantity
          return { reservation: `R-${++reservations}`, left: item.stock }
        },
      },
    },
  }
  // The soap package takes the server's request listeners over once its WSDL is read (the callback).
  await new Promise<void>((resolve, reject) => {
    soap.listen(server, { path: '/store', services, xml: wsdl(version), forceSoap12Headers: version === '1.2', suppressStack: true, callback: (error: unknown) => { if (error) reject(error as Error); else resolve() } })
  })
  // A copy of each request, for the tests: read beside the soap package's own reader.
  server.prependListener('request', (req: http.IncomingMessage) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    version,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
