package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http.HttpURI;
import dev.nodelet.kube.internal.jetty.http.MetaData;
import dev.nodelet.kube.internal.jetty.http2.ErrorCode;
import dev.nodelet.kube.internal.jetty.http2.api.Session;
import dev.nodelet.kube.internal.jetty.http2.api.Stream;
import dev.nodelet.kube.internal.jetty.http2.frames.DataFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.HeadersFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.PushPromiseFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.ResetFrame;
import dev.nodelet.kube.internal.jetty.util.Callback;
import dev.nodelet.kube.internal.jetty.util.Promise;
import dev.nodelet.kube.internal.watch.EarlyBody;
import dev.nodelet.kube.internal.watch.StartGate;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One streaming request: the Jetty stream's listener, fabric8's body of its response, and the promise of its
 * stream. All of it is what a watch holds while it is open.
 */
final class Http2Exchange extends Stream.Listener.Adapter implements AsyncBody, Promise<Stream> {
  /** Until the response arrives. */
  private StandardHttpRequest request;
  private final io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer;
  /** Asked when the request would get its stream; null when it starts as soon as it has one. */
  final StartGate gate;
  /** Until sent; the request's target is cleared once the response arrives. */
  private MetaData.Request metaData;
  /** Until the response arrives: the same request over HTTP/1.1, for a server that refuses HTTP/2. */
  private Supplier<CompletableFuture<HttpResponse<AsyncBody>>> overHttp11;
  /** The response of the request sent over HTTP/1.1 instead, until it arrives: cancelling cancels it. */
  private CompletableFuture<HttpResponse<AsyncBody>> instead;
  /** Until completed: the stream must not keep the response (its headers) for the life of a watch. */
  private CompletableFuture<HttpResponse<AsyncBody>> response = new CompletableFuture<>();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  volatile Http2Connection connection;
  volatile boolean cancelled;
  private Stream stream;
  /** The data callback held until the consumer asks for more: the flow-control window is given back then. */
  private Callback unconsumed;
  private boolean released;

  Http2Exchange(StandardHttpRequest request,
      io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer, MetaData.Request metaData,
      Supplier<CompletableFuture<HttpResponse<AsyncBody>>> overHttp11, StartGate gate) {
    this.request = request;
    this.consumer = consumer;
    this.metaData = metaData;
    this.overHttp11 = overHttp11;
    this.gate = gate;
  }

  /** The response to come; taken when it is completed. */
  synchronized CompletableFuture<HttpResponse<AsyncBody>> response() {
    return response;
  }

  /** Sends the request over HTTP/1.1 instead (never started here); its answer becomes this one's. */
  void sendOverHttp11() {
    Supplier<CompletableFuture<HttpResponse<AsyncBody>>> send;
    synchronized (this) {
      send = overHttp11;
      overHttp11 = null;
      metaData = null;
      request = null;
    }
    CompletableFuture<HttpResponse<AsyncBody>> answer;
    try {
      answer = send.get();
    } catch (RuntimeException e) {
      fail(e);
      return;
    }
    if (consumer instanceof EarlyBody early) {
      early.started(); // over HTTP/1.1 the request leaves when handed over, as on the high-level client's path
    }
    boolean cancel;
    synchronized (this) {
      instead = answer;
      cancel = cancelled;
    }
    if (cancel) {
      answer.cancel(true);
    }
    answer.whenComplete((answered, failure) -> {
      synchronized (this) {
        instead = null;
      }
      CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
      if (r == null) {
        if (answered != null) {
          answered.body().cancel(); // cancelled meanwhile
        }
      } else if (answered != null) {
        r.complete(answered);
      } else {
        r.completeExceptionally(failure);
      }
    });
  }

  void start(Session session) {
    if (cancelled) {
      release();
      return;
    }
    session.newStream(new HeadersFrame(metaData, null, true), this, this);
  }

  // ---- Promise<Stream>: the stream is open (or could not be) ----

  @Override
  public void succeeded(Stream opened) {
    boolean reset;
    synchronized (this) {
      stream = opened;
      reset = cancelled;
    }
    if (reset) {
      reset(opened);
    } else if (consumer instanceof EarlyBody early) {
      early.started(); // its response is due from now on, not while it waited for a session
    }
  }

  @Override
  public void failed(Throwable failure) {
    fail(failure);
  }

  // ---- Stream.Listener ----

  @Override
  public void onHeaders(Stream s, HeadersFrame frame) {
    synchronized (this) {
      stream = s;
    }
    if (frame.getMetaData() instanceof MetaData.Response answer) {
      if (metaData != null && metaData.getURI() instanceof HttpURI.Mutable target) {
        target.clear(); // sent: the stream holds the request for good, its target need not be kept
      }
      Http2Answer answered = new Http2Answer(request, answer.getStatus(), answer.getFields(), this);
      metaData = null;
      request = null;
      overHttp11 = null;
      CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
      if (r != null) {
        r.complete(answered);
      }
    }
    if (frame.isEndStream()) {
      end();
    }
  }

  @Override
  public void onBeforeData(Stream s) {
    // no demand: data waits in Jetty's queue until the consumer asks for it
  }

  @Override
  public void onData(Stream s, DataFrame frame, Callback callback) {
    if (cancelled) {
      callback.succeeded();
      return;
    }
    ByteBuffer data = frame.getData();
    ByteBuffer copy = ByteBuffer.allocate(data.remaining()).put(data).flip(); // Jetty reuses its buffers
    synchronized (this) {
      unconsumed = callback;
    }
    try {
      if (copy.hasRemaining()) {
        consumer.consume(List.of(copy), this);
      } else if (!frame.isEndStream()) {
        consume(); // an empty frame asks for nothing: read on
      }
    } catch (Exception e) {
      cancel();
      done.completeExceptionally(e);
      return;
    }
    if (frame.isEndStream()) {
      Callback c = takeUnconsumed();
      if (c != null) {
        c.succeeded();
      }
      end();
    }
  }

  @Override
  public void onReset(Stream s, ResetFrame frame) {
    fail(new IOException("the API server reset the stream (" + ErrorCode.toString(frame.getError(), "error "
        + frame.getError()) + ")"));
  }

  @Override
  public void onFailure(Stream s, int error, String reason, Throwable failure, Callback callback) {
    fail(failure != null ? failure : new IOException("the stream failed: " + reason));
    callback.succeeded();
  }

  @Override
  public boolean onIdleTimeout(Stream s, Throwable timeout) {
    return false; // a watch may be quiet for minutes: the server ends it
  }

  @Override
  public void onClosed(Stream s) {
    release();
  }

  @Override
  public Stream.Listener onPush(Stream s, PushPromiseFrame frame) {
    return null; // refused: an API server pushes nothing
  }

  // ---- AsyncBody ----

  @Override
  public void consume() {
    Stream s;
    Callback c;
    synchronized (this) {
      s = stream;
      c = unconsumed;
      unconsumed = null;
    }
    if (c != null) {
      c.succeeded();
    }
    if (s != null && !cancelled) {
      s.demand(1);
    }
  }

  @Override
  public CompletableFuture<Void> done() {
    return done;
  }

  @Override
  public void cancel() {
    Stream s;
    Callback c;
    CompletableFuture<HttpResponse<AsyncBody>> other;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      s = stream;
      c = unconsumed;
      unconsumed = null;
      other = instead;
    }
    if (other != null) {
      other.cancel(true);
    }
    if (c != null) {
      c.succeeded();
    }
    if (s != null) {
      reset(s);
    }
    // before the stream: start() or succeeded() resets it, or the origin drops it unsent
    done.cancel(false);
    CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
    if (r != null) {
      r.completeExceptionally(new CancellationException("the request was cancelled"));
    }
  }

  // ----

  void fail(Throwable failure) {
    release();
    CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
    if (r != null) {
      r.completeExceptionally(failure);
    }
    done.completeExceptionally(failure);
  }

  private void end() {
    done.complete(null);
    release();
  }

  private synchronized CompletableFuture<HttpResponse<AsyncBody>> takeResponse() {
    CompletableFuture<HttpResponse<AsyncBody>> r = response;
    response = null;
    return r;
  }

  private synchronized Callback takeUnconsumed() {
    Callback c = unconsumed;
    unconsumed = null;
    return c;
  }

  private void reset(Stream s) {
    s.reset(new ResetFrame(s.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);
    release();
  }

  /** The stream's place on its session is free: once, whichever way it ended. */
  private void release() {
    Http2Connection c;
    synchronized (this) {
      if (released) {
        return;
      }
      released = true;
      c = connection;
    }
    if (c != null) {
      c.origin.released(c);
    }
  }
}
