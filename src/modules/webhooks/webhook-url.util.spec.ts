import { webhookUrlProblem } from './webhook-url.util';

describe('webhook subscription URLs', () => {
  const at = (length: number) => {
    const base = 'https://hooks.example.com/';
    return base + 'a'.repeat(length - base.length);
  };

  it('accepts an https URL of exactly 2,048 characters and refuses one of 2,049', () => {
    expect(webhookUrlProblem(at(2048), false)).toBeNull();
    expect(webhookUrlProblem(at(2049), false)).toMatch(/at most 2048/);
  });

  it('refuses http, other schemes, credentials, fragments and text that is no URL', () => {
    expect(webhookUrlProblem('http://hooks.example.com/in', false)).toMatch(/https/);
    expect(webhookUrlProblem('ftp://hooks.example.com/in', false)).toMatch(/https/);
    expect(webhookUrlProblem('https://user:pw@hooks.example.com/in', false)).toMatch(/credentials/);
    expect(webhookUrlProblem('https://hooks.example.com/in#x', false)).toMatch(/fragment/);
    expect(webhookUrlProblem('hooks.example.com/in', false)).toMatch(/absolute/);
  });

  it('lets http through only to a loopback host, and only when the development setting allows it', () => {
    expect(webhookUrlProblem('http://127.0.0.1:8080/in', false)).toMatch(/https/);
    expect(webhookUrlProblem('http://127.0.0.1:8080/in', true)).toBeNull();
    expect(webhookUrlProblem('http://localhost/in', true)).toBeNull();
    expect(webhookUrlProblem('http://[::1]/in', true)).toBeNull();
    expect(webhookUrlProblem('http://10.0.0.5/in', true)).toMatch(/https/);
    expect(webhookUrlProblem('http://hooks.example.com/in', true)).toMatch(/https/);
  });
});
