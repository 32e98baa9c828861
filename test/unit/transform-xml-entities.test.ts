import t from 'tap'
import { xmlCodec } from '../../plugins/transform/xml.js'

const codec = xmlCodec({ attribute_prefix: '@', text_key: '#text', arrays: [], namespaces: 'keep' })

t.test('the five XML entities and numeric references are decoded, in text and attributes', async (t) => {
  t.same(codec.parse('<a b="&quot;&#x41;&apos;">&lt;&#65;&#x20AC;&gt;&amp;</a>'), { a: { '@b': '"A\'', '#text': '<A€>&' } })
})

t.test('HTML names and references that are no character stay as written', async (t) => {
  t.same(codec.parse('<a>&nbsp;&copy;&#0;&#xD800;&#x110000;</a>'), { a: '&nbsp;&copy;&#0;&#xD800;&#x110000;' })
})
