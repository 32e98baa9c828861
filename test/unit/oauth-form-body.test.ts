import t from 'tap'
import { duplicatedParameters, formValue, isFormContentType, parseFormBody } from '../../src/oauth/form-body.js'

function parse (text: string) {
  return Object.fromEntries(parseFormBody(Buffer.from(text, 'utf8')))
}

t.test('content types: case-insensitive media type, whitespace and parameters tolerated (A8)', async (t) => {
  for (const header of [
    'application/x-www-form-urlencoded',
    'Application/X-WWW-Form-Urlencoded',
    'application/x-www-form-urlencoded\t; charset=utf-8',
    ' application/x-www-form-urlencoded ;charset="UTF-8"',
    'application/x-www-form-urlencoded;',
  ]) t.equal(isFormContentType(header), true, JSON.stringify(header))
})

t.test('content types that are not a UTF-8 form are refused', async (t) => {
  for (const header of [
    undefined, '', 'application/json', 'text/plain', 'multipart/form-data; boundary=x',
    'application/x-www-form-urlencodedx', 'application/x-www-form-urlencoded; charset=iso-8859-1',
  ]) t.equal(isFormContentType(header), false, JSON.stringify(header))
})

t.test('parses names and values, + as space, %-escapes, keeps every value of a repeated name', async (t) => {
  t.same(parse('a=1&b=x+y%2Bz&a=2&&c=&d'), { a: ['1', '2'], b: ['x y+z'], c: [''], d: [''] })
})

t.test('an empty body is no parameters', async (t) => {
  t.same(parse(''), {})
})

t.test('a malformed %-escape is invalid_request, not passed through', async (t) => {
  t.throws(() => parse('client_secret=%zz'), { code: 'invalid_request', status: 400, message: 'The request body is not valid application/x-www-form-urlencoded.' })
  t.throws(() => parse('a=%'), { code: 'invalid_request' })
})

t.test('a body that is not UTF-8 is invalid_request', async (t) => {
  t.throws(() => parseFormBody(Buffer.from([0x61, 0x3d, 0xff])), { code: 'invalid_request', message: 'The request body is not valid UTF-8.' })
})

t.test('an empty value counts as omitted; duplicates are reported by name', async (t) => {
  const params = parseFormBody(Buffer.from('scope=&grant_type=a&grant_type=b&other=1&other=2'))
  t.equal(formValue(params, 'scope'), undefined)
  t.equal(formValue(params, 'missing'), undefined)
  t.same(duplicatedParameters(params, ['grant_type', 'scope']), ['grant_type'])
})
