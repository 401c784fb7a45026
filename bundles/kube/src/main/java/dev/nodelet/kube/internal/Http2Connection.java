package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http2.api.Session;
import dev.nodelet.kube.internal.jetty.http2.frames.GoAwayFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.SettingsFrame;
import dev.nodelet.kube.internal.jetty.util.thread.Scheduler;

/** One HTTP/2 session of an origin and the streams it carries. */
final class Http2Connection extends Session.Listener.Adapter {

  /** Streams a session is given before the server's SETTINGS say otherwise: none; it is used once they arrive. */
  static final int NOT_READY = 0;

  final Http2Origin origin;
  volatile Session session;
  /** The server's limit; {@link #NOT_READY} until its SETTINGS arrive. Guarded by the origin. */
  int maxStreams = NOT_READY;
  /** Streams started and not yet ended. Guarded by the origin. */
  int streams;
  /** Whether its opening ended, ready or failed: it counts among the origin's openings until then. Guarded by it. */
  boolean settled;
  /** Fails the opening if the server's SETTINGS have not come by then; set before the connect starts. */
  Scheduler.Task deadline;

  Http2Connection(Http2Origin origin) {
    this.origin = origin;
  }

  @Override
  public void onSettings(Session session, SettingsFrame frame) {
    Integer max = frame.getSettings().get(SettingsFrame.MAX_CONCURRENT_STREAMS);
    boolean first;
    synchronized (origin) {
      first = maxStreams == NOT_READY;
      maxStreams = max == null ? (first ? Integer.MAX_VALUE : maxStreams) : Math.max(1, max);
    }
    if (first) {
      origin.ready(this, session);
    } else {
      origin.dispatch(); // a larger limit gives room
    }
  }

  @Override
  public boolean onIdleTimeout(Session session) {
    synchronized (origin) {
      if (streams > 0) {
        return false; // a quiet watch is not idle
      }
      origin.lost = 0; // a session stayed unused: the lost streams are not coming back
      return true;
    }
  }

  @Override
  public void onClose(Session session, GoAwayFrame frame) {
    origin.closed(this);
  }

  @Override
  public void onFailure(Session session, Throwable failure) {
    origin.closed(this);
  }
}
