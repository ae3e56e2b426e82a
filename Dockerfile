# The service image: one image, every role (`svc serve|api|projector|relay|worker …`).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY config ./config
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# The V8 heap bound `npm start` uses (the service's memory is bounded by its pages and caches).
ENTRYPOINT ["node", "--max-old-space-size=256", "--max-semi-space-size=16", "src/cli.ts"]
CMD ["serve"]
