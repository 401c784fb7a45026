package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * {@code GET pods/<pod>/log}, as kube-apiserver serves it: the pod's {@code spec.nodeName} names the Node, whose
 * {@code InternalIP} and {@code daemonEndpoints.kubeletEndpoint.Port} locate the node's API; the request goes on to
 * {@code /containerLogs/<namespace>/<pod>/<container>} with the query of the {@code PodLogOptions}, authenticated by
 * the API server's kubelet client certificate ({@link #clientCaPem()} is what a node trusts). As kube-apiserver
 * without {@code --kubelet-certificate-authority}, it does not verify the node's serving certificate.
 */
public final class PodLogProxy {

  /** The query parameters of {@code PodLogOptions} that go on to the node. */
  private static final Set<String> FORWARDED = Set.of("follow", "previous", "timestamps", "sinceSeconds",
      "sinceTime", "tailLines", "limitBytes");
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final Function<String, MockResponse> get;

  /** @param get the stored object of a path, as the dispatcher's {@code handleGet} answers */
  public PodLogProxy(Function<String, MockResponse> get) {
    this.get = get;
  }

  /** Whether this request is a read of a pod's log. */
  static boolean handles(Access access) {
    return access.resourceRequest() && access.apiGroup().isEmpty() && "pods".equals(access.resource())
        && "log".equals(access.subresource()) && access.verb() == Verb.GET;
  }

  /** The request made to the node for a pod's log, or the error the API server answers instead. */
  record Target(URI uri, MockResponse error) {
  }

  Target target(RecordedRequest request, Access access) {
    JsonNode pod = object("/api/v1/namespaces/" + access.namespace() + "/pods/" + access.name());
    if (pod == null) {
      return new Target(null, Status.response(404, "pods \"" + access.name() + "\" not found"));
    }
    List<String> containers = new ArrayList<>();
    pod.path("spec").path("containers").forEach(c -> containers.add(c.path("name").asText()));
    String container = query(request, "container");
    if (container == null || container.isEmpty()) {
      if (containers.size() != 1) {
        return new Target(null, Status.response(400, "a container name must be specified for pod "
            + access.name() + ", choose one of: " + containers));
      }
      container = containers.get(0);
    } else if (!containers.contains(container)) {
      return new Target(null, Status.response(400, "container " + container + " is not valid for pod "
          + access.name()));
    }
    String nodeName = pod.path("spec").path("nodeName").asText("");
    if (nodeName.isEmpty()) {
      return new Target(null, Status.response(400, "pod " + access.name() + " does not have a host assigned"));
    }
    JsonNode node = object("/api/v1/nodes/" + nodeName);
    if (node == null) {
      return new Target(null, Status.response(404, "nodes \"" + nodeName + "\" not found"));
    }
    String address = null;
    for (JsonNode a : node.path("status").path("addresses")) {
      if ("InternalIP".equals(a.path("type").asText()) && address == null) {
        address = a.path("address").asText();
      }
    }
    int port = node.path("status").path("daemonEndpoints").path("kubeletEndpoint").path("Port").asInt(0);
    if (address == null || port <= 0) {
      return new Target(null, Status.response(500, "node " + nodeName + " has no InternalIP address or kubelet "
          + "port in its status"));
    }
    StringBuilder query = new StringBuilder();
    for (String key : FORWARDED) {
      String value = query(request, key);
      if (value != null) {
        query.append(query.isEmpty() ? "?" : "&").append(key).append('=')
            .append(URLEncoder.encode(value, StandardCharsets.UTF_8));
      }
    }
    String host = address.contains(":") ? "[" + address + "]" : address;
    return new Target(URI.create("https://" + host + ":" + port + "/containerLogs/" + access.namespace() + "/"
        + access.name() + "/" + container + query), null);
  }

  /**
   * Answers a read of a pod's log with what the node's API answers; with {@code follow}, hands the node's URL to
   * {@link FollowedLogs}, which streams it.
   */
  MockResponse answer(RecordedRequest request, Access access) {
    Target target = target(request, access);
    if (target.error() != null) {
      return target.error();
    }
    String follow = query(request, "follow");
    if ("true".equals(follow) || "1".equals(follow)) {
      return new MockResponse().setResponseCode(200).setHeader(FollowedLogs.FOLLOW_HEADER, target.uri().toString());
    }
    try {
      HttpURLConnection connection = open(target.uri());
      connection.setReadTimeout((int) TIMEOUT.toMillis()); // a whole log, not a follow: a node that hangs is an error
      int code = connection.getResponseCode();
      String body;
      try (InputStream in = code >= 400 ? connection.getErrorStream() : connection.getInputStream()) {
        body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (code >= 400) {
        return Status.response(code, body.strip());
      }
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "text/plain").setBody(body);
    } catch (IOException e) {
      return Status.response(500, "Get \"" + target.uri() + "\": " + e.getMessage());
    }
  }

  /** Opens a GET of the node's API with the kubelet client certificate. */
  static HttpURLConnection open(URI uri) throws IOException {
    HttpsURLConnection connection = (HttpsURLConnection) uri.toURL().openConnection();
    connection.setSSLSocketFactory(Client.INSTANCE.tls.getSocketFactory());
    connection.setHostnameVerifier((host, session) -> true); // as kube-apiserver without a kubelet CA
    connection.setConnectTimeout((int) TIMEOUT.toMillis());
    return connection;
  }

  private static String query(RecordedRequest request, String key) {
    return io.fabric8.mockwebserver.http.HttpUrl.parse("http://localhost" + request.getPath()).queryParameter(key);
  }

  private JsonNode object(String path) {
    MockResponse found = get.apply(path);
    if (found == null || found.code() != 200 || found.getBody() == null) {
      return null;
    }
    return Json.read(found.getBody().readUtf8());
  }

  /** The PEM of the certificate the node's API must trust (its client CA) to accept this API server. */
  public static String clientCaPem() {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
      pem.writeObject(Client.INSTANCE.certificate);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  /** The API server's kubelet client identity: one self-signed certificate, made once, its key in memory only. */
  private static final class Client {
    static final Client INSTANCE = new Client();

    final X509Certificate certificate;
    final SSLContext tls;

    private Client() {
      try {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair keys = generator.generateKeyPair();
        Instant now = Instant.now();
        X500Name name = new X500Name("O=kubeadm:cluster-admins,CN=kube-apiserver-kubelet-client");
        certificate = new JcaX509CertificateConverter().getCertificate(new JcaX509v3CertificateBuilder(name,
            new BigInteger(63, new SecureRandom()).add(BigInteger.ONE), Date.from(now.minus(Duration.ofHours(1))),
            Date.from(now.plus(Duration.ofDays(365))), name, keys.getPublic())
            .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
            .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
            .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth))
            .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        char[] password = "kubelet-client".toCharArray();
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("client", keys.getPrivate(), password, new Certificate[] {certificate});
        KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(store, password);
        tls = SSLContext.getInstance("TLS");
        tls.init(keyManagers.getKeyManagers(), new TrustManager[] {new TrustAll()}, null);
      } catch (GeneralSecurityException | IOException | org.bouncycastle.operator.OperatorCreationException e) {
        throw new IllegalStateException("cannot make the API server's kubelet client certificate", e);
      }
    }
  }

  /** kube-apiserver without {@code --kubelet-certificate-authority} does not verify the node's certificate. */
  private static final class TrustAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
