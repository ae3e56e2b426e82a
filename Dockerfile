# The service image: one image, every role (`svc serve|api|projector|relay|worker …`).
# Built in two stages: the first installs everything (the workspaces' too) and runs the
# build (`scripts/build.ts`: the API client's types and the console in web/dist); the
# second keeps the production dependencies, the code and the built console.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY tools/client-gen/package.json ./tools/client-gen/
COPY web/package.json ./web/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY config ./config
COPY scripts ./scripts
COPY web ./web
RUN node scripts/build.ts

FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY tools/client-gen/package.json ./tools/client-gen/
COPY web/package.json ./web/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY config ./config
COPY --from=build /app/web/dist ./web/dist
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# The V8 heap bound `npm start` uses (the service's memory is bounded by its pages and caches).
ENTRYPOINT ["node", "--max-old-space-size=256", "--max-semi-space-size=16", "src/cli.ts"]
CMD ["serve"]
