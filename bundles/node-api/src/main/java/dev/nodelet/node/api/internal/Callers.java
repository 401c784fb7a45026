package dev.nodelet.node.api.internal;

import com.sun.net.httpserver.HttpsExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Who calls, and whether they may read logs: a client certificate the TLS handshake verified against the client CAs
 * (its CN is the user, as the kubelet's x509 authenticator), else a bearer token of the token file; then the
 * authorized users, or every authenticated caller when that list is empty.
 */
final class Callers {

  private final Map<String, String> tokens; // token -> user; never logged
  private final Set<String> authorizedUsers;

  Callers(Map<String, String> tokens, Set<String> authorizedUsers) {
    this.tokens = Map.copyOf(tokens);
    this.authorizedUsers = Set.copyOf(authorizedUsers);
  }

  /**
   * Reads a token file: one {@code token,user} a line, {@code #} comments and blank lines skipped.
   *
   * @throws IllegalArgumentException naming the file and the line (by number: the token is a secret)
   */
  static Map<String, String> readTokens(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the token file " + file + ": " + e.getMessage(), e);
    }
    Map<String, String> tokens = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int comma = line.indexOf(',');
      if (comma <= 0 || comma == line.length() - 1) {
        throw new IllegalArgumentException("line " + (i + 1) + " of the token file " + file
            + " is not 'token,user'");
      }
      tokens.put(line.substring(0, comma).strip(), line.substring(comma + 1).strip());
    }
    return tokens;
  }

  /** @return the authenticated user, empty when the caller is anonymous */
  Optional<String> user(HttpsExchange exchange) {
    try {
      Certificate[] peer = exchange.getSSLSession().getPeerCertificates();
      if (peer.length > 0 && peer[0] instanceof X509Certificate certificate) {
        return Optional.of(commonName(certificate));
      }
    } catch (SSLPeerUnverifiedException e) {
      // no client certificate: a token maybe
    }
    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return Optional.empty();
    }
    byte[] offered = authorization.substring(7).strip().getBytes(StandardCharsets.UTF_8);
    String user = null;
    // every token is compared, in constant time: the answer's timing tells nothing about a token
    for (Map.Entry<String, String> entry : tokens.entrySet()) {
      if (MessageDigest.isEqual(offered, entry.getKey().getBytes(StandardCharsets.UTF_8))) {
        user = entry.getValue();
      }
    }
    return Optional.ofNullable(user);
  }

  boolean authorized(String user) {
    return authorizedUsers.isEmpty() || authorizedUsers.contains(user);
  }

  private static String commonName(X509Certificate certificate) {
    try {
      for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          return rdn.getValue().toString();
        }
      }
    } catch (InvalidNameException e) {
      // no name to give
    }
    return certificate.getSubjectX500Principal().getName();
  }
}
