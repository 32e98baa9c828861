/** HS256 secret of the Express Gateway peer's jwt policy (the harness signs its bench token with it). */
export const EXPRESS_GATEWAY_JWT_SECRET = 'lanegate-bench-express-gateway-secret'
