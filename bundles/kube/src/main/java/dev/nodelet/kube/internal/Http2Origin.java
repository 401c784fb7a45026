package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http2.ErrorCode;
import dev.nodelet.kube.internal.jetty.http2.HTTP2Session;
import dev.nodelet.kube.internal.jetty.http2.api.Session;
import dev.nodelet.kube.internal.jetty.util.Callback;
import dev.nodelet.kube.internal.jetty.util.Promise;
import dev.nodelet.kube.internal.jetty.util.thread.Scheduler;
import dev.nodelet.kube.internal.watch.StartGate;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/2 sessions of {@link Http2Streams} to one API server and the requests waiting for a stream on one of them:
 * which request starts on which session, when sessions are opened (one per limit's worth of waiting requests, at most
 * {@value #MAX_OPENING} at once) and closed, and the pause after a failed opening.
 */
final class Http2Origin {

  private static final Logger LOG = LoggerFactory.getLogger(Http2Origin.class);

  /** Streams a new session is expected to take until a server's SETTINGS say (a kube-apiserver's default). */
  static final int EXPECTED_STREAMS = 100;
  /**
   * Sessions opened at once at most: 5,000 watches starting together wait for 50 TLS handshakes, which one after
   * another take tens of seconds on a loaded machine.
   */
  static final int MAX_OPENING = 8;
  /**
   * After a session could not be opened, none is tried for this long, doubling with each failure up to
   * {@link #MAX_CONNECT_BACKOFF_NANOS}: a server that is down or stopping is not handed a connection per restart.
   */
  private static final long CONNECT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_CONNECT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  /** How long an opening may take from the connect to the server's SETTINGS (a TLS handshake on a busy server). */
  static final int OPENING_TIMEOUT_SECONDS = 10;

  /** The client's: its HTTP/2 client, TLS, resolver, and whether it is closed. */
  private final Http2Streams streams;
  private final String host;
  private final int port;
  private final List<Http2Connection> connections = new ArrayList<>();
  private final ArrayDeque<Http2Exchange> waiting = new ArrayDeque<>();
  /** Sessions being opened. */
  private int opening;
  /**
   * Streams that ended because their session went away (GOAWAY, a broken connection) and have not started again:
   * after an API server restart their watches come back through the restart bucket, a few per interval, and the
   * sessions they need are opened as soon as the first of them waits, not one at a time as each fills.
   */
  int lost;
  /** Streams a session takes: the server's limit once one session has said it, a kube-apiserver's until then. */
  private int expectedStreams = EXPECTED_STREAMS;
  /** The server negotiated no HTTP/2: its streaming requests take the high-level client. */
  volatile boolean noHttp2;
  /** The next dispatch of requests a gate held back, and when it runs (nanoTime); null when none is due. */
  private Scheduler.Task held;
  private long heldUntil;
  /** Openings that failed in a row; the last one's error, and when (nanoTime) the next may be tried. */
  private int connectFailures;
  private IOException connectError;
  private long connectAgainAt;

  Http2Origin(Http2Streams streams, String host, int port) {
    this.streams = streams;
    this.host = host;
    this.port = port;
  }

  void submit(Http2Exchange exchange) {
    IOException unreachable = null;
    synchronized (this) {
      if (!streams.isClosed()) {
        if (connections.isEmpty() && opening == 0 && connectError != null
            && streams.timing().nanoTime().getAsLong() - connectAgainAt < 0) {
          unreachable = connectError; // no session, and the last opening failed moments ago
        } else {
          waiting.add(exchange);
        }
      }
    }
    if (streams.isClosed()) {
      exchange.fail(new IOException("the Kubernetes client is closed"));
    } else if (unreachable != null) {
      exchange.fail(unreachable);
    } else {
      dispatch();
    }
  }

  /**
   * Gives waiting requests a stream on a session with room, and opens sessions for those beyond the room (and for
   * the lost streams still to come back). A request its gate refuses keeps its place; the others of that gate are
   * not asked again in this round.
   */
  void dispatch() {
    List<Http2Exchange> start = new ArrayList<>();
    int open = 0;
    long holdNanos = Long.MAX_VALUE;
    long now = streams.timing().nanoTime().getAsLong();
    synchronized (this) {
      StartGate refused = null;
      for (Iterator<Http2Exchange> it = waiting.iterator(); it.hasNext(); ) {
        Http2Exchange next = it.next();
        if (next.cancelled) {
          it.remove();
          continue;
        }
        if (next.gate != null && next.gate == refused) {
          continue;
        }
        Http2Connection room = null;
        for (Http2Connection c : connections) {
          if (c.streams < c.maxStreams && !c.session.isClosed()) {
            room = c;
            break;
          }
        }
        if (room == null) {
          break;
        }
        if (next.gate != null) {
          long wait = next.gate.tryStart();
          if (wait > 0) {
            refused = next.gate;
            holdNanos = Math.min(holdNanos, wait);
            continue;
          }
        }
        it.remove();
        room.streams++;
        if (lost > 0) {
          lost--;
        }
        next.connection = room;
        start.add(next);
      }
      // one session per session's worth of the waiting requests, or of the streams lost with the sessions that
      // went away (their restarts come back a few at a time), beyond the room of the open ones; a few at a time,
      // and only while requests come
      long free = 0;
      for (Http2Connection c : connections) {
        if (!c.session.isClosed()) {
          free += Math.min(c.maxStreams - c.streams, expectedStreams);
        }
      }
      long demand = Math.max(waiting.size(), lost) - free;
      int wanted = demand <= 0 || waiting.isEmpty() && start.isEmpty() ? 0
          : (int) Math.min(MAX_OPENING, (demand + expectedStreams - 1) / expectedStreams);
      if (!streams.isClosed() && wanted > opening) {
        if (connectError != null && now - connectAgainAt < 0) {
          holdNanos = Math.min(holdNanos, connectAgainAt - now); // the last opening failed moments ago
        } else {
          open = wanted - opening;
          opening = wanted;
        }
      }
    }
    for (Http2Exchange exchange : start) {
      exchange.start(exchange.connection.session);
    }
    for (int i = 0; i < open; i++) {
      connect();
    }
    if (holdNanos != Long.MAX_VALUE) {
      dispatchIn(holdNanos);
    }
  }

  /** Dispatches again after {@code nanos}, unless a dispatch is due before then: one timer task per origin. */
  private void dispatchIn(long nanos) {
    long at = streams.timing().nanoTime().getAsLong() + nanos;
    synchronized (this) {
      if (streams.isClosed() || held != null && heldUntil - at <= 0) {
        return;
      }
      if (held != null) {
        held.cancel();
      }
      heldUntil = at;
      held = streams.http2().getScheduler().schedule(() -> {
        synchronized (this) {
          held = null;
        }
        dispatch();
      }, nanos, TimeUnit.NANOSECONDS);
    }
  }

  /** Resolves the host without blocking, as the high-level client does, then opens a session. */
  private void connect() {
    Http2Connection connection = new Http2Connection(this);
    // nothing else ends an opening that the server never answers: the client's connections have no idle timeout
    Duration timeout = streams.timing().openingTimeout();
    connection.deadline = streams.http2().getScheduler().schedule(() -> {
      connectFailed(connection, new IOException("no HTTP/2 SETTINGS from the server within "
          + (timeout.toMillis() % 1000 == 0 ? timeout.toSeconds() + " s" : timeout.toMillis() + " ms")
          + " of connecting"));
      Session session = connection.session;
      if (session != null) {
        end(session);
      }
    }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    streams.resolver().resolve(host, port, new Promise<>() {
      @Override
      public void succeeded(List<InetSocketAddress> addresses) {
        connect(connection, addresses.get(0));
      }

      @Override
      public void failed(Throwable failure) {
        connectFailed(connection, failure);
      }
    });
  }

  /** The address keeps the host name: TLS sends it (SNI) and verifies the certificate against it. */
  private void connect(Http2Connection connection, InetSocketAddress address) {
    try {
      streams.http2().connect(streams.ssl(), address, connection, new Promise<>() {
        @Override
        public void succeeded(Session session) {
          connection.session = session; // used once the server's SETTINGS arrive
        }

        @Override
        public void failed(Throwable failure) {
          connectFailed(connection, failure);
        }
      });
    } catch (RuntimeException e) {
      connectFailed(connection, e);
    }
  }

  /** The server's first SETTINGS: the session takes streams from now on. */
  void ready(Http2Connection connection, Session session) {
    synchronized (this) {
      connection.session = session;
      if (streams.isClosed() || connection.settled) {
        end(session); // closed, or its opening failed meanwhile
        return;
      }
      connection.settled = true;
      connection.deadline.cancel();
      connections.add(connection);
      opening--;
      connectFailures = 0;
      connectError = null;
      expectedStreams = connection.maxStreams == Integer.MAX_VALUE ? EXPECTED_STREAMS : connection.maxStreams;
    }
    dispatch();
  }

  /**
   * An opening failed: once per connection, whichever way it is reported (the host's resolution, the connect's
   * promise, the session's failure, its close, the deadline), as each counted opening ends once.
   */
  private void connectFailed(Http2Connection connection, Throwable failure) {
    List<Http2Exchange> failed;
    boolean first = false;
    boolean refused = isNoHttp2(failure);
    synchronized (this) {
      if (connection.settled) {
        return;
      }
      connection.settled = true;
      connection.deadline.cancel();
      opening--;
      failed = new ArrayList<>(waiting);
      waiting.clear();
      if (refused && !noHttp2) {
        noHttp2 = true;
        first = true;
      }
    }
    if (refused) {
      // from now on this server's streaming requests take the high-level client, as do the waiting ones
      if (first) {
        LOG.info("The API server {}:{} offers no HTTP/2 (ALPN): its watches use HTTP/1.1, one connection each",
            host, port);
      }
      // once per server: restarts among them pass no gate now (they wait for no session any more)
      failed.forEach(Http2Exchange::sendOverHttp11);
      return;
    }
    IOException error = new IOException("cannot connect to " + host + ":" + port + ": " + failure, failure);
    synchronized (this) {
      connectFailures++;
      connectError = error;
      connectAgainAt = streams.timing().nanoTime().getAsLong() + Math.min(MAX_CONNECT_BACKOFF_NANOS,
          CONNECT_BACKOFF_NANOS << Math.min(connectFailures - 1, 10));
    }
    failed.forEach(exchange -> exchange.fail(error));
  }

  void closed(Http2Connection connection) {
    boolean beforeReady;
    synchronized (this) {
      connections.remove(connection);
      beforeReady = !connection.settled;
    }
    if (beforeReady) {
      connectFailed(connection, new IOException("the connection closed before the server's SETTINGS"));
    } else {
      dispatch();
    }
  }

  /**
   * A stream ended. A session left without streams is closed while another is open and no request waits: new
   * streams go to the first sessions with room, so after watches end the later sessions drain and go.
   */
  void released(Http2Connection connection) {
    Session surplus = null;
    synchronized (this) {
      connection.streams--;
      if (connection.session.isClosed()) {
        lost++;
      }
      if (connection.streams == 0 && waiting.isEmpty() && connections.size() > 1
          && connections.remove(connection)) {
        surplus = connection.session;
      }
    }
    if (surplus != null) {
      end(surplus);
    }
    dispatch();
  }

  void close() {
    List<Http2Exchange> failed;
    List<Http2Connection> open;
    synchronized (this) {
      failed = new ArrayList<>(waiting);
      waiting.clear();
      open = new ArrayList<>(connections);
      connections.clear();
      if (held != null) {
        held.cancel();
        held = null;
      }
    }
    IOException error = new IOException("the Kubernetes client is closed");
    failed.forEach(exchange -> exchange.fail(error));
    open.forEach(c -> end(c.session));
  }

  synchronized int sessions() {
    return connections.size();
  }

  synchronized int opening() {
    return opening;
  }

  synchronized int streams() {
    return connections.stream().mapToInt(c -> c.streams).sum();
  }

  /**
   * Whether the server refused HTTP/2, the one protocol a session offers: by the TLS alert that ALPN defines for
   * this (RFC 7301, {@code no_application_protocol}). The JDK reports a received alert by its name only.
   */
  private static boolean isNoHttp2(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SSLHandshakeException && String.valueOf(t.getMessage()).contains("no_application_protocol")) {
        return true;
      }
    }
    return false;
  }

  /** GOAWAY, then the connection itself: a server need not close it when a client says it is going. */
  private static void end(Session session) {
    Runnable disconnect = () -> {
      if (session instanceof HTTP2Session http2Session) {
        http2Session.disconnect();
      }
    };
    session.close(ErrorCode.NO_ERROR.code, "closed", Callback.from(disconnect, failure -> disconnect.run()));
  }
}
