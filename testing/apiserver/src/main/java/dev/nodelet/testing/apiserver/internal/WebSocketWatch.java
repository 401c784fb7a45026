package dev.nodelet.testing.apiserver.internal;

import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/** A watch served over the mock server's WebSocket upgrade, as the fabric8 client asks for by default. */
final class WebSocketWatch extends WebSocketListener implements WatchSession.Sink {

  private final WatchSession session;
  private final Watches watches;
  private volatile WebSocket webSocket;

  WebSocketWatch(WatchSession session, Watches watches) {
    this.session = session;
    this.watches = watches;
  }

  WatchSession session() {
    return session;
  }

  @Override
  public void onOpen(WebSocket webSocket, Response response) {
    this.webSocket = webSocket;
    session.attach(this);
    watches.open(session);
  }

  @Override
  public void onClosing(WebSocket webSocket, int code, String reason) {
    webSocket.close(code, reason);
  }

  @Override
  public void onClosed(WebSocket webSocket, int code, String reason) {
    watches.close(session);
  }

  @Override
  public void onFailure(WebSocket webSocket, Throwable error, Response response) {
    watches.close(session);
  }

  @Override
  public void send(String json) {
    webSocket.send(json);
  }

  @Override
  public void close() {
    webSocket.close(1000, "watch closed");
  }
}
