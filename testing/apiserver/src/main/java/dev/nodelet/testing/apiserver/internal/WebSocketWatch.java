package dev.nodelet.testing.apiserver.internal;

import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/** A watch served over the mock server's WebSocket upgrade, as the fabric8 client asks for by default. */
final class WebSocketWatch extends WebSocketListener implements WatchSession.Sink {

  private final WatchSession session;
  private final ApiServerDispatcher dispatcher;
  private volatile WebSocket webSocket;

  WebSocketWatch(WatchSession session, ApiServerDispatcher dispatcher) {
    this.session = session;
    this.dispatcher = dispatcher;
  }

  WatchSession session() {
    return session;
  }

  @Override
  public void onOpen(WebSocket webSocket, Response response) {
    this.webSocket = webSocket;
    session.attach(this);
    dispatcher.open(session);
  }

  @Override
  public void onClosing(WebSocket webSocket, int code, String reason) {
    webSocket.close(code, reason);
  }

  @Override
  public void onClosed(WebSocket webSocket, int code, String reason) {
    dispatcher.close(session);
  }

  @Override
  public void onFailure(WebSocket webSocket, Throwable error, Response response) {
    dispatcher.close(session);
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
