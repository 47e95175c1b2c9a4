<?php
// Checks a vinhistory webhook: php verify.php (reads the body on stdin; the header and secret from the environment).
function verify_vinhistory_signature(string $header, string $rawBody, string $secret, int $toleranceSeconds = 300): bool {
    $timestamp = null;
    $signatures = [];
    foreach (explode(',', $header) as $part) {
        [$key, $value] = array_pad(explode('=', $part, 2), 2, '');
        if ($key === 't' && ctype_digit($value)) $timestamp = (int) $value;
        if ($key === 'v1') $signatures[] = $value;
    }
    if ($timestamp === null || abs(time() - $timestamp) > $toleranceSeconds) return false;
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    foreach ($signatures as $given) {
        if (hash_equals($expected, $given)) return true;
    }
    return false;
}

if (PHP_SAPI === 'cli' && realpath($argv[0]) === __FILE__) {
    $body = stream_get_contents(STDIN);
    echo verify_vinhistory_signature(getenv('SIGNATURE'), $body, getenv('WEBHOOK_SECRET')) ? "valid\n" : "invalid\n";
}
