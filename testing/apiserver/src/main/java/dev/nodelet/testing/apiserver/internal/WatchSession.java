package dev.nodelet.testing.apiserver.internal;

import io.fabric8.mockwebserver.crud.AttributeSet;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One open watch: what it selects and how it started. The dispatcher writes events to it under its event lock, so
 * a session sees events in resourceVersion order; the transport ({@link Sink}) is WebSocket or HTTP streaming.
 */
final class WatchSession {

  /** Where a session's events go. Implementations must not block. */
  interface Sink {
    void send(String json);

    void close();
  }

  final RequestInfo request;
  final AttributeSet query;
  final String fieldSelector;
  /** The name the field selector requires; empty when it requires none. */
  final String selectedName;
  /** Resume after this resourceVersion; {@code null} starts with the current state as ADDED events. */
  final Long resumeAfter;
  final boolean sendInitialEvents;
  final boolean bookmarks;
  final long timeoutSeconds;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Sink sink;
  /** How an object is written in an event: as it is, or as a Table row for {@code as=Table}. */
  private volatile java.util.function.UnaryOperator<String> encoder = java.util.function.UnaryOperator.identity();

  WatchSession(RequestInfo request, AttributeSet query, String fieldSelector, Long resumeAfter,
      boolean sendInitialEvents, boolean bookmarks, long timeoutSeconds) {
    this.request = request;
    this.query = query;
    this.fieldSelector = fieldSelector;
    this.selectedName = Access.selectedName(fieldSelector);
    this.resumeAfter = resumeAfter;
    this.sendInitialEvents = sendInitialEvents;
    this.bookmarks = bookmarks;
    this.timeoutSeconds = timeoutSeconds;
  }

  void encodeWith(java.util.function.UnaryOperator<String> encoder) {
    this.encoder = encoder;
  }

  void attach(Sink sink) {
    this.sink = sink;
  }

  boolean selects(AttributeSet attributes) {
    return attributes != null && attributes.matches(query);
  }

  void send(String type, String object) {
    if (!closed.get()) {
      try {
        String encoded = type.equals("ERROR") || type.equals("BOOKMARK") ? object : encoder.apply(object);
        sink.send("{\"type\":\"" + type + "\",\"object\":" + encoded + "}");
      } catch (RuntimeException e) {
        close(); // the client went away: one broken watch must not fail the write that fed it
      }
    }
  }

  /** Ends the stream; true the first time only. */
  boolean close() {
    if (!closed.compareAndSet(false, true)) {
      return false;
    }
    Sink s = sink;
    if (s != null) {
      s.close();
    }
    return true;
  }

  boolean isClosed() {
    return closed.get();
  }
}
