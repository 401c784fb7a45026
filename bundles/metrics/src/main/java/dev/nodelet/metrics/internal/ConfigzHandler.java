package dev.nodelet.metrics.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Serves {@code /configz}, the effective configuration of every Nodelet PID ({@link Configz}); 404 elsewhere. */
final class ConfigzHandler implements HttpHandler {

  /** Where the configurations come from. */
  @FunctionalInterface
  interface Source {
    List<Configz.Pid> read() throws IOException;
  }

  private static final Logger LOG = LoggerFactory.getLogger(ConfigzHandler.class);

  private final Source source;

  ConfigzHandler(Source source) {
    this.source = source;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (!"/configz".equals(path)) {
        send(exchange, 404, "text/plain; charset=utf-8", "not found: " + path + " (try /metrics or /configz)\n");
        return;
      }
      String json;
      try {
        json = Configz.json(source.read());
      } catch (IOException | RuntimeException e) {
        LOG.warn("/configz: cannot read the configurations: {}", e.getMessage());
        send(exchange, 503, "text/plain; charset=utf-8", "cannot read the configurations: " + e.getMessage() + "\n");
        return;
      }
      send(exchange, 200, "application/json", json);
    }
  }

  private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }
}
