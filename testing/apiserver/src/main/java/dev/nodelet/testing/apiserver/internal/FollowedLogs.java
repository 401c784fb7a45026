package dev.nodelet.testing.apiserver.internal;

import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code pods/log?follow=true}: the node's answer streamed to the client as it comes, chunk by chunk, until either
 * side ends it (the mock server's responses are whole, so this goes around them, as plain-HTTP watches do).
 */
final class FollowedLogs {

  /** The header by which {@link PodLogProxy} hands the node's URL of a followed log to the front end. */
  static final String FOLLOW_HEADER = "X-Nodelet-Follow-Log";

  private FollowedLogs() {
  }

  static boolean isFollow(HttpServerRequest request) {
    String follow = request.getParam("follow");
    return request.method() == io.vertx.core.http.HttpMethod.GET && request.path().endsWith("/log")
        && ("true".equals(follow) || "1".equals(follow));
  }

  static void stream(HttpServerRequest request, ApiServerDispatcher dispatcher) {
    RecordedRequest recorded = new RecordedRequest(request.version().alpnName().toUpperCase(Locale.ROOT),
        HttpMethod.GET, request.uri(), Headers.builder().addAll(request.headers()).build(), new Buffer());
    MockResponse response = dispatcher.dispatch(recorded);
    HttpServerResponse out = request.response();
    String target = response.getHeaders().get(FOLLOW_HEADER);
    if (target == null) { // an error, or a denial: answered whole
      out.setStatusCode(response.code());
      response.getHeaders().toMultimap().forEach((k, v) -> out.headers().add(k, v));
      out.end(response.getBody() == null ? "" : response.getBody().readUtf8());
      return;
    }
    // writes run on the request's event loop only (see the plain-HTTP watch); the node is read on a thread of its own
    Context context = Vertx.currentContext();
    Thread reader = new Thread(() -> copy(URI.create(target), out, context), "apiserver-pod-log-follow");
    reader.setDaemon(true);
    reader.start();
  }

  private static void copy(URI target, HttpServerResponse out, Context context) {
    HttpURLConnection connection = null;
    try {
      connection = PodLogProxy.open(target);
      int code = connection.getResponseCode();
      if (code >= 400) {
        String body;
        try (InputStream error = connection.getErrorStream()) {
          body = error == null ? "" : new String(error.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        context.runOnContext(v -> {
          if (!out.closed()) {
            out.setStatusCode(code).putHeader("Content-Type", "application/json").end(Status.json(code, body.strip()));
          }
        });
        return;
      }
      HttpURLConnection open = connection;
      context.runOnContext(v -> {
        out.closeHandler(x -> open.disconnect()); // the client went: so does the read of the node
        if (!out.closed()) {
          out.setChunked(true).setStatusCode(200).putHeader("Content-Type", "text/plain").writeHead();
        }
      });
      try (InputStream in = connection.getInputStream()) {
        byte[] chunk = new byte[8192];
        for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
          io.vertx.core.buffer.Buffer data = io.vertx.core.buffer.Buffer.buffer(Arrays.copyOf(chunk, n));
          context.runOnContext(v -> {
            if (!out.closed() && !out.ended()) {
              out.write(data);
            }
          });
        }
      }
    } catch (IOException e) {
      // the node or the client went: the response ends below
    } finally {
      if (connection != null) {
        connection.disconnect();
      }
      context.runOnContext(v -> {
        if (!out.closed() && !out.ended()) {
          if (!out.headWritten()) {
            out.setStatusCode(500).end(Status.json(500, "Get \"" + target + "\": the node's API cannot be read"));
          } else {
            out.end();
          }
        }
      });
    }
  }
}
