/** The policy's `xml` options: how XML bodies map to JSON and back (xml.ts). */
export interface XmlSettings {
  readonly attribute_prefix: string
  readonly text_key: string
  readonly arrays: readonly string[]
  readonly namespaces: 'keep' | 'strip'
}
