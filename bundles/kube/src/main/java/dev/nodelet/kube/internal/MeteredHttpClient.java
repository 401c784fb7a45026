package dev.nodelet.kube.internal;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The JDK HTTP client under fabric8's, measuring every attempt it sends: the time to the response's status line, and
 * the attempts that got none (connection refused, timeout). fabric8's interceptors hear of a request that got no
 * answer only before a retry, and its clients here make none, so the measuring happens one layer down.
 */
final class MeteredHttpClient extends HttpClient {

  private final HttpClient delegate;
  private final KubeMetrics metrics;

  private MeteredHttpClient(HttpClient delegate, KubeMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
      HttpResponse.BodyHandler<T> handler) {
    long start = System.nanoTime();
    return delegate.sendAsync(request, handler).whenComplete((response, failure) -> record(request, start, response));
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
      HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
    long start = System.nanoTime();
    return delegate.sendAsync(request, handler, pushPromiseHandler)
        .whenComplete((response, failure) -> record(request, start, response));
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    long start = System.nanoTime();
    HttpResponse<T> response = null;
    try {
      response = delegate.send(request, handler);
      return response;
    } finally {
      record(request, start, response);
    }
  }

  private void record(HttpRequest request, long start, HttpResponse<?> response) {
    metrics.record(request.method(), request.uri(), response == null ? KubeMetrics.NO_ANSWER
        : Integer.toString(response.statusCode()), System.nanoTime() - start);
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return delegate.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return delegate.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return delegate.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return delegate.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return delegate.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return delegate.authenticator();
  }

  @Override
  public Version version() {
    return delegate.version();
  }

  @Override
  public Optional<Executor> executor() {
    return delegate.executor();
  }

  @Override
  public WebSocket.Builder newWebSocketBuilder() {
    return delegate.newWebSocketBuilder();
  }

  /** Builds the JDK client as usual and measures it. */
  static final class Builder implements HttpClient.Builder {
    private final HttpClient.Builder delegate;
    private final KubeMetrics metrics;

    Builder(HttpClient.Builder delegate, KubeMetrics metrics) {
      this.delegate = delegate;
      this.metrics = metrics;
    }

    @Override
    public Builder cookieHandler(CookieHandler cookieHandler) {
      delegate.cookieHandler(cookieHandler);
      return this;
    }

    @Override
    public Builder connectTimeout(Duration duration) {
      delegate.connectTimeout(duration);
      return this;
    }

    @Override
    public Builder sslContext(SSLContext sslContext) {
      delegate.sslContext(sslContext);
      return this;
    }

    @Override
    public Builder sslParameters(SSLParameters sslParameters) {
      delegate.sslParameters(sslParameters);
      return this;
    }

    @Override
    public Builder executor(Executor executor) {
      delegate.executor(executor);
      return this;
    }

    @Override
    public Builder followRedirects(Redirect policy) {
      delegate.followRedirects(policy);
      return this;
    }

    @Override
    public Builder version(Version version) {
      delegate.version(version);
      return this;
    }

    @Override
    public Builder priority(int priority) {
      delegate.priority(priority);
      return this;
    }

    @Override
    public Builder proxy(ProxySelector proxySelector) {
      delegate.proxy(proxySelector);
      return this;
    }

    @Override
    public Builder authenticator(Authenticator authenticator) {
      delegate.authenticator(authenticator);
      return this;
    }

    @Override
    public HttpClient build() {
      return new MeteredHttpClient(delegate.build(), metrics);
    }
  }
}
