# The operator's image: make docker-build IMG=registry/kupenstack:tag
# Build stage: a static binary (CGO off), so the runtime image needs no libc.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that code changes reuse the cached download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o /kupenstack ./cmd/kupenstack

# Runtime: distroless static, as the numeric non-root user 65532 (runAsNonRoot can verify it).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /kupenstack /kupenstack
USER 65532:65532
ENTRYPOINT ["/kupenstack"]
