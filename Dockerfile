# syntax=docker/dockerfile:1
# Production image: Node.js 22 LTS, the compiled service only (no sources, no development
# dependencies, so none of the embedded PostgreSQL binaries), run as the unprivileged node user.
# Build, migrate, bootstrap the first administrator and start: README, "Docker / production".
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev && rm -rf node_modules/.cache

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# npm run migration:run / seed / bootstrap:admin call it first; without sources it builds nothing.
COPY --from=build --chown=node:node /app/scripts/build-if-stale.js ./scripts/build-if-stale.js
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/v1/health/ready').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node","--max-semi-space-size=32","dist/src/main.js"]
