package dev.nodelet.node.api.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** An HTTPS client that trusts one serving certificate and presents a client certificate, or none. */
final class TlsClient {

  private final HttpClient http;
  private final int port;

  TlsClient(X509Certificate trusted, Certificates.Identity identity, int port) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("server", trusted);
    TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trustManagers.init(trust);
    KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    if (identity != null) {
      keys.setKeyEntry("client", identity.key(), "x".toCharArray(), identity.chain().toArray(Certificate[]::new));
    }
    keyManagers.init(keys, "x".toCharArray());
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
    this.http = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build();
    this.port = port;
  }

  HttpResponse<String> get(String pathAndQuery, String token) throws Exception {
    return http.send(request(pathAndQuery, token), HttpResponse.BodyHandlers.ofString());
  }

  HttpRequest request(String pathAndQuery, String token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://localhost:" + port + pathAndQuery))
        .timeout(Duration.ofSeconds(10));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return request.build();
  }

  HttpClient http() {
    return http;
  }
}
