// The loopback token backend and fleet service of `fleetauth-bench --http`: one thread, epoll,
// HTTP/1.1 keep-alive, so that the server costs little beside the clients it serves and the
// figures are the clients'. It answers two routes, with bodies the size real ones have:
//
//   GET or POST /token/driver/{vehicleId}
//       {"jwt": "<a 730-character token naming the vehicle>", "creationTimestamp": ms,
//        "expirationTimestamp": ms}, an hour's token; its signature is random bytes
//        (a client cannot check it; the server does not).
//   PUT /v1/providers/{provider}/vehicles/{vehicleId}
//       200 with the vehicle's name when the request carries `Authorization: Bearer`,
//       401 without one.
//
// Anything else gets 404. It prints `PORT n` (the port the kernel gave it) and serves until
// its standard input closes or it is killed. Linux only, as the benchmark's real-HTTP runs are.
#if defined(__linux__)

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { inputCapacity = 64 * 1024, outputCapacity = 64 * 1024, maximumConnections = 65536 };

/// One client connection: what it sent that is not answered yet, and what is not written yet.
typedef struct {
    int fd;
    size_t inputLength;
    size_t outputStart, outputLength;
    int watchesWrites;
    char input[inputCapacity];
    char output[outputCapacity];
} Connection;

static Connection *connections[maximumConnections];
static int epollFD;

static void base64url(const unsigned char *bytes, size_t count, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < count; i += 3) {
        unsigned value = (unsigned)bytes[i] << 16;
        if (i + 1 < count) value |= (unsigned)bytes[i + 1] << 8;
        if (i + 2 < count) value |= bytes[i + 2];
        out[o++] = alphabet[(value >> 18) & 63];
        out[o++] = alphabet[(value >> 12) & 63];
        if (i + 1 < count) out[o++] = alphabet[(value >> 6) & 63];
        if (i + 2 < count) out[o++] = alphabet[value & 63];
    }
    out[o] = 0;
}

static long long nowMilliseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Appends an answer with `status` and `body` to the connection's output.
static void answer(Connection *connection, int status, const char *body) {
    const char *reason = status == 200 ? "OK" : status == 401 ? "Unauthorized" : "Not Found";
    size_t bodyLength = strlen(body);
    char *out = connection->output + connection->outputStart + connection->outputLength;
    size_t room = outputCapacity - connection->outputStart - connection->outputLength;
    int written = snprintf(
        out, room,
        "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n\r\n%s",
        status, reason, bodyLength, body);
    if (written > 0 && (size_t)written < room) connection->outputLength += (size_t)written;
}

/// The token answer for `vehicle`.
static void answerToken(Connection *connection, const char *vehicle) {
    long long now = nowMilliseconds();
    char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"loopback-test-key-2\"}";
    char payload[512];
    snprintf(
        payload, sizeof payload,
        "{\"iss\":\"fleet-token-minter@loopback-project.iam.gserviceaccount.com\","
        "\"sub\":\"fleet-token-minter@loopback-project.iam.gserviceaccount.com\","
        "\"aud\":\"https://fleetengine.googleapis.com/\",\"iat\":%lld,\"exp\":%lld,"
        "\"authorization\":{\"vehicleid\":\"%s\"}}",
        now / 1000, now / 1000 + 3600, vehicle);
    unsigned char signature[256];
    for (size_t i = 0; i < sizeof signature; i++) signature[i] = (unsigned char)rand();
    char token[2048], part[1024];
    base64url((const unsigned char *)header, strlen(header), part);
    strcpy(token, part);
    strcat(token, ".");
    base64url((const unsigned char *)payload, strlen(payload), part);
    strcat(token, part);
    strcat(token, ".");
    base64url(signature, sizeof signature, part);
    strcat(token, part);
    char body[3072];
    snprintf(
        body, sizeof body, "{\"jwt\":\"%s\",\"creationTimestamp\":%lld,\"expirationTimestamp\":%lld}", token, now,
        now + 3600 * 1000);
    answer(connection, 200, body);
}

/// Answers one request whose head is `head` (NUL-terminated, without its body).
static void route(Connection *connection, char *head) {
    char *method = head;
    char *path = strchr(head, ' ');
    if (!path) return answer(connection, 404, "{\"error\":\"bad request line\"}");
    *path++ = 0;
    char *end = strchr(path, ' ');
    if (end) *end = 0;
    const char *rest = end ? end + 1 : "";
    if (strncmp(path, "/token/driver/", 14) == 0) {
        char vehicle[128];
        snprintf(vehicle, sizeof vehicle, "%.*s", (int)strcspn(path + 14, "?/"), path + 14);
        return answerToken(connection, vehicle);
    }
    if (strcmp(method, "PUT") == 0 && strncmp(path, "/v1/providers/", 14) == 0 && strstr(path, "/vehicles/")) {
        if (!strcasestr(rest, "\nAuthorization: Bearer ")) {
            return answer(connection, 401, "{\"error\":\"no bearer token\"}");
        }
        char body[256];
        snprintf(body, sizeof body, "{\"name\":\"%.200s\"}", path + 4);
        return answer(connection, 200, body);
    }
    answer(connection, 404, "{\"error\":\"no such resource\"}");
}

/// Answers every whole request the connection's input holds; keeps a partial one.
static void serveInput(Connection *connection) {
    for (;;) {
        connection->input[connection->inputLength] = 0;
        char *headEnd = strstr(connection->input, "\r\n\r\n");
        if (!headEnd) return;
        size_t headLength = (size_t)(headEnd - connection->input) + 4;
        size_t bodyLength = 0;
        char *length = strcasestr(connection->input, "\nContent-Length:");
        if (length && length < headEnd) bodyLength = strtoul(length + 16, NULL, 10);
        if (connection->inputLength < headLength + bodyLength) return;
        *headEnd = 0;
        route(connection, connection->input);
        size_t used = headLength + bodyLength;
        memmove(connection->input, connection->input + used, connection->inputLength - used);
        connection->inputLength -= used;
    }
}

static void closeConnection(Connection *connection) {
    epoll_ctl(epollFD, EPOLL_CTL_DEL, connection->fd, NULL);
    close(connection->fd);
    connections[connection->fd] = NULL;
    free(connection);
}

/// Writes what it can of the output; returns 0 when the connection failed.
static int flushOutput(Connection *connection) {
    while (connection->outputLength > 0) {
        ssize_t sent = send(
            connection->fd, connection->output + connection->outputStart, connection->outputLength, MSG_NOSIGNAL);
        if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
        connection->outputStart += (size_t)sent;
        connection->outputLength -= (size_t)sent;
    }
    connection->outputStart = 0;
    return 1;
}

int main(void) {
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int on = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0) {
        perror("loopback-fleet-service");
        return 1;
    }
    socklen_t addressLength = sizeof address;
    getsockname(listener, (struct sockaddr *)&address, &addressLength);
    printf("PORT %d\n", ntohs(address.sin_port));
    fflush(stdout);

    epollFD = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epollFD, EPOLL_CTL_ADD, listener, &event);
    event = (struct epoll_event){.events = EPOLLIN, .data.fd = STDIN_FILENO};
    epoll_ctl(epollFD, EPOLL_CTL_ADD, STDIN_FILENO, &event);

    struct epoll_event ready[256];
    for (;;) {
        int count = epoll_wait(epollFD, ready, 256, -1);
        if (count < 0 && errno != EINTR) return 1;
        for (int i = 0; i < count; i++) {
            int fd = ready[i].data.fd;
            if (fd == STDIN_FILENO) {
                char byte;
                if (read(STDIN_FILENO, &byte, 1) <= 0) return 0;
                continue;
            }
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (client >= maximumConnections) {
                        close(client);
                        continue;
                    }
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
                    Connection *connection = calloc(1, sizeof(Connection));
                    connection->fd = client;
                    connections[client] = connection;
                    event = (struct epoll_event){.events = EPOLLIN | EPOLLRDHUP, .data.fd = client};
                    epoll_ctl(epollFD, EPOLL_CTL_ADD, client, &event);
                }
                continue;
            }
            Connection *connection = connections[fd];
            if (!connection) continue;
            if (ready[i].events & EPOLLOUT) {
                if (!flushOutput(connection)) {
                    closeConnection(connection);
                    continue;
                }
            }
            if (ready[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                int closed = 0;
                for (;;) {
                    size_t room = inputCapacity - 1 - connection->inputLength;
                    if (room == 0) {
                        closed = 1;  // a head larger than the buffer: not a client of ours
                        break;
                    }
                    ssize_t got = recv(fd, connection->input + connection->inputLength, room, 0);
                    if (got > 0) {
                        connection->inputLength += (size_t)got;
                        continue;
                    }
                    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed = 1;
                    break;
                }
                serveInput(connection);
                if (!flushOutput(connection) || closed) {
                    closeConnection(connection);
                    continue;
                }
            }
            int pending = connection->outputLength > 0;
            if (pending != connection->watchesWrites) {
                connection->watchesWrites = pending;
                event = (struct epoll_event){.events = EPOLLIN | EPOLLRDHUP | (pending ? EPOLLOUT : 0), .data.fd = fd};
                epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event);
            }
        }
    }
}

#else
#include <stdio.h>
int main(void) {
    fputs("loopback-fleet-service runs on Linux only (epoll).\n", stderr);
    return 1;
}
#endif
